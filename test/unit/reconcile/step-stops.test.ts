// Stops reached by a step's error classification, with no cluster behaviour claimed: the error
// a port throws names the row (domain/reconcile/README.md, "Rows … added since the seed").
import { describe, expect, it } from 'vitest';
import { dryRunRender } from '../../../domain/reconcile/dry-run.ts';
import { isHalt } from '../../../domain/reconcile/halt.ts';
import { loadHooks } from '../../../domain/reconcile/hook-steps.ts';
import type { ReconcilePorts, TargetCluster } from '../../../domain/reconcile/ports.ts';
import type { SyncRun } from '../../../domain/reconcile/run.ts';
import { Stops } from '../../../domain/reconcile/stops.ts';
import { attempt, configMap, deployment, NOW, RENDER_A, release } from '../observe/fixtures.ts';

/** A request that got no answer, as the target adapter marks it (adapters/kube/target-responses.ts). */
class NoAnswer extends Error {
  readonly unreachable = true;
}

function syncRun(dryRun: TargetCluster['dryRun']): SyncRun {
  const target = { identity: { name: 'local', server: 'https://target.example' }, dryRun } as TargetCluster;
  return {
    release: release({}, { lastAttempted: attempt(RENDER_A) }),
    ports: {} as ReconcilePorts,
    now: NOW,
    forced: false,
    target,
    objects: [configMap(), deployment()],
    renderRef: RENDER_A,
    inFlight: false,
    tracker: undefined,
  };
}

describe('stops a step reaches from the error its port throws', () => {
  it('Find the cluster: not reachable — the dry run got no answer → ClusterResolution / ClusterNotReady, retried', async () => {
    const stop = await dryRunRender(
      syncRun(() => Promise.reject(new NoAnswer('connect ECONNREFUSED 127.0.0.1:1'))),
    );
    expect(isHalt(stop) && stop.halt).toBe('clusterNotReady');
    expect(Stops.clusterNotReady).toMatchObject({
      stage: 'ClusterResolution',
      reason: 'ClusterNotReady',
      retry: true,
    });
  });

  it('Render or mutate: error — the Lifecycle of spec.lifecycleRef cannot be read → Rendering / DeployFailed naming it, retried', async () => {
    const ports = {
      lifecycle: { hooksOf: () => Promise.reject(new Error('Lifecycle team-a/pre not found')) },
    } as unknown as ReconcilePorts;
    const stop = await loadHooks(release({ lifecycleRef: { name: 'pre' } }), ports);
    expect(isHalt(stop) && stop).toMatchObject({
      halt: 'renderFailed',
      message: 'spec.lifecycleRef: Lifecycle team-a/pre not found',
    });
    expect(Stops.renderFailed).toMatchObject({ stage: 'Rendering', reason: 'DeployFailed', retry: true });
  });
});
