// The status of a ReleaseSet stays under 64 KiB at 5,000 Clusters, every one of them failing with
// a long message: every list in it is capped (failing 20 × 256 characters, held 20, steps 33).
import { describe, expect, it } from 'vitest';
import { releaseSetStatusSchema } from '../../../domain/api/release-set.ts';
import { at, cluster, FakeNamespace, reconcile, releaseSet } from './fleet-fixtures.ts';

describe('ReleaseSet status size', () => {
  it('is under 64 KiB at 5,000 Clusters', { timeout: 60_000 }, () => {
    const clusters = Array.from({ length: 5000 }, (_, i) =>
      cluster(`cluster-with-a-rather-long-name-${String(i).padStart(5, '0')}`, { ring: `ring-${i % 32}` }),
    );
    const steps = Array.from({ length: 32 }, (_, i) => ({
      name: `step-${i}`,
      clusters: { matchLabels: { ring: `ring-${i}` } },
    }));
    const ns = new FakeNamespace();
    // Every child written at once (no steps), then the same set with 32 steps: 5,000 children exist.
    let r = reconcile(releaseSet({ rollout: { maxFailures: '100%' } }), ns, { clusters, now: at(0) });
    expect(ns.releases.size).toBe(5000);
    for (const name of ns.releases.keys()) ns.makeFailing(name, `Deployment fleet/web: ${'x'.repeat(2000)}`);
    for (const [i, name] of [...ns.releases.keys()].entries()) {
      if (i % 2 === 0) {
        const rel = ns.releases.get(name)!;
        ns.releases.set(name, {
          ...rel,
          metadata: {
            ...rel.metadata,
            annotations: { ...rel.metadata.annotations, 'convoy.dev/pin': `sha256:${'e'.repeat(64)}` },
          },
        });
      }
    }
    const stepped = releaseSet({ rollout: { maxFailures: '100%', steps } }, { status: r.set.status });
    r = reconcile(stepped, ns, { clusters, now: at(10) });
    const status = r.decision.status;
    expect(status.clusters?.selected).toBe(5000);
    expect(status.clusters).toMatchObject({ failed: 2500 });
    expect(status.failing).toHaveLength(20);
    expect(status.failingOmitted).toBeGreaterThan(0);
    expect(status.held).toHaveLength(20);
    expect(status.heldOmitted).toBeGreaterThan(0);
    expect(status.steps).toHaveLength(32);
    expect(releaseSetStatusSchema.safeParse(status).success).toBe(true);
    const bytes = Buffer.byteLength(JSON.stringify(status), 'utf8');
    expect(bytes).toBeLessThan(64 * 1024);
    process.stdout.write(`ReleaseSet status at 5,000 Clusters: ${bytes} bytes\n`);
  });
});
