import { describe, expect, it } from 'vitest';
import { parseRelease, type Release } from '../../../domain/api/index.ts';
import { releaseChangeCause } from '../../../domain/relay/release-events.ts';
import { dueTimes, observersNotified } from '../../../domain/relay/timers.ts';
import { reconcileUpToDate } from '../../../domain/relay/up-to-date.ts';
import { renderReleaseGauges } from '../../../relay/release-gauges.ts';
import { compactRelease, stringPool } from '../../../relay/watch/compact.ts';
import { slimRelease } from '../../../relay/watch/slim.ts';

const REF = `sha256:${'a'.repeat(64)}`;
const AT = '2026-12-01T10:00:00Z';

/** A Release of namespace `namespace` as it comes off the wire (a JSON text parsed: its strings its own). */
function wireRelease(i: number, namespace: string): Release {
  const condition = (type: string, reason: string) => ({
    type,
    status: 'True',
    reason,
    message: 'long message',
    lastTransitionTime: AT,
    observedGeneration: 2,
  });
  const attempt = { attemptedAt: AT, phase: 'Succeeded', renderRef: REF };
  const text = JSON.stringify({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: {
      name: `app-${i}`,
      namespace,
      uid: `uid-${i}`,
      generation: 2,
      resourceVersion: String(100 + i),
      creationTimestamp: AT,
      labels: { app: `app-${i}` },
    },
    spec: {
      cluster: { name: 'production-cluster' },
      source: {
        git: { url: 'https://git.example.com/platform/apps.git', ref: { branch: 'main' }, path: 'apps/web' },
      },
      syncPolicy: { interval: '6m' },
    },
    status: {
      observedGeneration: 2,
      reconciledAt: AT,
      lastAttempted: attempt,
      lastSuccessful: attempt,
      rollout: { renderRef: REF, state: 'Succeeded' },
      healthSummary: {
        renderRef: REF,
        checkedAt: AT,
        total: 1,
        healthy: 1,
        progressing: 0,
        degraded: 0,
        missing: 0,
        unknown: 0,
        objects: [],
      },
      conditions: [
        condition('Applied', 'ReconcileSucceeded'),
        condition('InSync', 'InSync'),
        condition('Healthy', 'Healthy'),
      ],
    },
  });
  const parsed = parseRelease(slimRelease(JSON.parse(text) as Release));
  if (!parsed.ok) throw new Error(`fixture does not parse: ${parsed.error}`);
  return parsed.value;
}

describe('compactRelease: the parsed Release the relay caches', () => {
  it('is equal to the parsed Release, field for field, and is a copy', () => {
    const release = wireRelease(1, 'team-a');
    const compact = compactRelease(release, stringPool());
    expect(compact).toEqual(release);
    expect(compact).not.toBe(release);
    expect(compact.status).not.toBe(release.status);
  });

  it('every decision of the relay is the same on the compact Release', () => {
    const now = new Date('2026-12-01T10:03:00Z');
    const strings = stringPool();
    const parsed = [wireRelease(1, 'team-a'), wireRelease(2, 'team-b')];
    const compact = parsed.map((r) => compactRelease(r, strings));
    for (let i = 0; i < parsed.length; i++) {
      expect(reconcileUpToDate(compact[i])).toBe(reconcileUpToDate(parsed[i]));
      expect(dueTimes(compact[i], now, {}, now)).toEqual(dueTimes(parsed[i], now, {}, now));
      expect(releaseChangeCause(compact[0], compact[i])).toBe(releaseChangeCause(parsed[0], parsed[i]));
      expect(observersNotified(compact[0], compact[i])).toBe(observersNotified(parsed[0], parsed[i]));
    }
    expect(renderReleaseGauges(compact, now.getTime())).toBe(renderReleaseGauges(parsed, now.getTime()));
  });

  it('pools only the strings a fleet holds alike: 1,000 Releases in 10 namespaces add no uid, name, time or renderRef', () => {
    const strings = stringPool();
    for (let i = 0; i < 1000; i++) compactRelease(wireRelease(i, `team-${i % 10}`), strings);
    // apiVersion, kind, 10 namespaces, cluster name, url, branch, path; condition types, status, reasons.
    expect(strings.size).toBeLessThanOrEqual(25);
    expect(strings.intern('team-3')).toBe('team-3');
    const before = strings.size;
    strings.intern('team-3');
    expect(strings.size).toBe(before);
  });
});
