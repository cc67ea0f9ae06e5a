import { describe, expect, it } from 'vitest';
import {
  releaseSetInterval,
  releaseSetTimerDue,
  SET_TIMER_CAUSE,
  type TimedReleaseSet,
} from '../../../domain/relay/set-timers.ts';
import { MIN_INTERVAL_MS } from '../../../domain/relay/timers.ts';
import { slimReleaseSet } from '../../../relay/watch/slim.ts';

const set = (interval?: unknown, metadata: Record<string, unknown> = {}): TimedReleaseSet => ({
  metadata: { uid: 'set-1', ...metadata },
  spec: { template: { spec: interval === undefined ? {} : { syncPolicy: { interval } } } },
});
const T0 = Date.parse('2026-12-03T04:00:00Z');

describe('ReleaseSet interval timer (domain/relay/set-timers.ts)', () => {
  it('takes the template spec.syncPolicy.interval, the Release default (5m) without one or when it does not parse, never under 1 s', () => {
    expect(releaseSetInterval(set('30s'))).toBe(30_000);
    expect(releaseSetInterval(set())).toBe(5 * 60_000);
    expect(releaseSetInterval({ metadata: { uid: 'x' } })).toBe(5 * 60_000);
    expect(releaseSetInterval(set('${cluster.labels.interval}'))).toBe(5 * 60_000);
    expect(releaseSetInterval(set(42))).toBe(5 * 60_000);
    expect(releaseSetInterval(set('0s'))).toBe(MIN_INTERVAL_MS);
    expect(SET_TIMER_CAUSE).toBe('timer: interval');
  });

  it('is due an interval after the last message the set was sent this term', () => {
    expect(releaseSetTimerDue(set('30s'), new Date(T0 + 5_000), new Date(T0))).toBe(T0 + 35_000);
  });

  it('a set not sent anything yet this term is due at its slot within one interval of the term start, spread by uid', () => {
    const dues = Array.from(
      { length: 200 },
      (_, i) => releaseSetTimerDue(set('60s', { uid: `set-${i}` }), undefined, new Date(T0)) ?? NaN,
    );
    for (const due of dues) {
      expect(due).toBeGreaterThanOrEqual(T0);
      expect(due).toBeLessThan(T0 + 60_000);
    }
    // Spread over the minute, not one burst.
    expect(new Set(dues.map((d) => Math.floor((d - T0) / 1000))).size).toBeGreaterThan(40);
    // Stable: the same set has the same slot.
    expect(releaseSetTimerDue(set('60s', { uid: 'set-7' }), undefined, new Date(T0))).toBe(dues[7]);
  });

  it('a set being deleted, or without a uid, has no timer', () => {
    expect(
      releaseSetTimerDue(set('30s', { deletionTimestamp: '2026-12-03T04:00:00Z' }), undefined, new Date(T0)),
    ).toBeUndefined();
    expect(releaseSetTimerDue(set('30s', { uid: '' }), undefined, new Date(T0))).toBeUndefined();
  });

  it("the relay's slim copy of a set keeps the template interval and nothing else of the spec", () => {
    const raw = {
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'ReleaseSet',
      metadata: { name: 'web', namespace: 'team-a', uid: 'set-1', resourceVersion: '1', generation: 1 },
      spec: {
        clusters: { selector: {} },
        template: {
          spec: { source: { git: { url: 'https://x/y.git' } }, syncPolicy: { interval: '45s', prune: true } },
        },
      },
    };
    const slim = slimReleaseSet(raw);
    expect(slim).toEqual({
      apiVersion: raw.apiVersion,
      kind: raw.kind,
      metadata: raw.metadata,
      spec: { template: { spec: { syncPolicy: { interval: '45s' } } } },
    });
    expect(releaseSetInterval(slim)).toBe(45_000);
  });
});
