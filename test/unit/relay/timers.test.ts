import { describe, expect, it } from 'vitest';
import {
  driftWaitsForReconcile,
  dueLoops,
  dueTimes,
  FRESHNESS_INTERVAL_MS,
  healthWaitsForReconcile,
  observersNotified,
} from '../../../domain/relay/timers.ts';
import { healthRenderRef, healthVerdict } from '../../../domain/observe/health-verdict.ts';
import { planDriftCheck } from '../../../domain/observe/insync-verdict.ts';
import { release } from './fixtures.ts';

const NOW = new Date('2026-01-01T12:00:00Z');
const iso = (date: Date) => date.toISOString();
const at = (text: string) => new Date(text);
const plus = (text: string, ms: number) => new Date(Date.parse(text) + ms);

const condition = (type: string, lastTransitionTime: string) => ({
  type,
  status: 'True',
  reason: type,
  message: '',
  lastTransitionTime,
  observedGeneration: 1,
});

describe('reconcile timer', () => {
  it('is due syncPolicy.interval after status.lastAttempted.attemptedAt', () => {
    const r = release({
      spec: { syncPolicy: { interval: '2m' } },
      status: { lastAttempted: { attemptedAt: '2026-01-01T11:00:00Z', phase: 'Succeeded' } },
    });
    expect(dueTimes(r, NOW).reconcile).toEqual(at('2026-01-01T11:02:00Z'));
  });

  it('is due interval after creation before the first attempt (default 5m)', () => {
    expect(dueTimes(release(), NOW).reconcile).toEqual(at('2026-01-01T00:05:00Z'));
  });

  it('uses the later of attemptedAt and reconciledAt', () => {
    const r = release({
      status: {
        reconciledAt: '2026-01-01T11:30:00Z',
        lastAttempted: { attemptedAt: '2026-01-01T11:00:00Z', phase: '' },
      },
    });
    expect(dueTimes(r, NOW).reconcile).toEqual(at('2026-01-01T11:35:00Z'));
  });

  it('is not due again within an interval of the last send (the function may still run)', () => {
    const r = release({
      spec: { syncPolicy: { interval: '2m' } },
      status: { lastAttempted: { attemptedAt: '2026-01-01T11:00:00Z', phase: 'Succeeded' } },
    });
    const sent = at('2026-01-01T11:59:30Z');
    expect(dueTimes(r, NOW, { reconcile: sent }).reconcile).toEqual(plus(iso(sent), 120_000));
    expect(dueLoops(r, NOW, { reconcile: sent, drift: NOW, health: NOW })).toEqual([]);
  });

  it('is absent for a suspended Release; drift and health still run', () => {
    const r = release({ spec: { suspend: true } });
    const times = dueTimes(r, NOW);
    expect(times.reconcile).toBeUndefined();
    expect(dueLoops(r, NOW)).toEqual(['drift', 'health']);
  });
});

describe('drift timer', () => {
  it('is due driftDetection.interval after the relay last sent the Release to drift', () => {
    const r = release({ spec: { driftDetection: { interval: '3m' } } });
    expect(dueTimes(r, NOW, { drift: at('2026-01-01T11:58:00Z') }).drift).toEqual(at('2026-01-01T12:01:00Z'));
  });

  it('after a relay restart, falls back to InSync.lastTransitionTime', () => {
    const r = release({
      spec: { driftDetection: { interval: '3m' } },
      status: { conditions: [condition('InSync', '2026-01-01T11:58:30Z')] },
    });
    expect(dueTimes(r, NOW).drift).toEqual(at('2026-01-01T12:01:30Z'));
  });

  it('runs at least every 10 minutes, whatever the interval', () => {
    const r = release({ spec: { driftDetection: { interval: '1h' } } });
    expect(dueTimes(r, NOW, { drift: NOW }).drift).toEqual(plus(iso(NOW), FRESHNESS_INTERVAL_MS));
  });
});

describe('health timer', () => {
  it('is due healthAssessment.interval after healthSummary.checkedAt', () => {
    const r = release({
      spec: { healthAssessment: { interval: '30s' } },
      status: {
        healthSummary: {
          renderRef: 'sha256:x',
          checkedAt: '2026-01-01T11:59:50Z',
          total: 0,
          healthy: 0,
          progressing: 0,
          degraded: 0,
          missing: 0,
          unknown: 0,
          objects: [],
        },
      },
    });
    expect(dueTimes(r, NOW).health).toEqual(at('2026-01-01T12:00:20Z'));
  });

  it('without healthAssessment, is due every 10 minutes (Healthy NotConfigured stays fresh), from Healthy.lastTransitionTime', () => {
    const r = release({ status: { conditions: [condition('Healthy', '2026-01-01T11:55:00Z')] } });
    expect(dueTimes(r, NOW).health).toEqual(at('2026-01-01T12:05:00Z'));
  });

  it('a zero interval is treated as one second, not a busy loop', () => {
    const r = release({ spec: { healthAssessment: { interval: '0s' } } });
    expect(dueTimes(r, NOW, { health: NOW }).health).toEqual(plus(iso(NOW), 1_000));
  });
});

describe('observer timers while the observers wait for the reconcile (a burst filled their queues)', () => {
  const A = `sha256:${'a'.repeat(64)}`;
  const B = `sha256:${'b'.repeat(64)}`;
  const pending = (type: string, generation = 1) => ({
    type,
    status: 'Unknown',
    reason: 'Pending',
    message: '',
    lastTransitionTime: '2026-01-01T11:59:00Z',
    observedGeneration: generation,
  });
  const attempt = (renderRef: string) => ({ attemptedAt: '2026-01-01T11:59:00Z', phase: '', renderRef });
  const waitingAtWave = (conditions: unknown[], generation = 1) =>
    release({
      generation,
      spec: { healthAssessment: { interval: '30s' }, driftDetection: { interval: '30s' } },
      status: {
        lastAttempted: attempt(B),
        lastSuccessful: { ...attempt(A), phase: 'Succeeded' },
        rollout: { renderRef: B, state: 'Progressing', wave: 1, startedAt: '2026-01-01T11:59:00Z' },
        conditions,
      },
    });

  it('Healthy and InSync already Pending for a render that waits at a wave: both fall back to the 10-minute backstop', () => {
    const r = waitingAtWave([pending('Healthy'), pending('InSync')]);
    const times = dueTimes(r, NOW, { health: at('2026-01-01T11:59:00Z'), drift: at('2026-01-01T11:59:00Z') });
    expect(times.health).toEqual(plus('2026-01-01T11:59:00Z', FRESHNESS_INTERVAL_MS));
    expect(times.drift).toEqual(plus('2026-01-01T11:59:00Z', FRESHNESS_INTERVAL_MS));
  });

  it('not yet Pending, Pending at an older generation, or the render applied: the configured interval', () => {
    expect(dueTimes(waitingAtWave([]), NOW, { health: NOW }).health).toEqual(plus(iso(NOW), 30_000));
    expect(
      dueTimes(waitingAtWave([pending('Healthy', 1), pending('InSync', 1)], 2), NOW, {
        health: NOW,
        drift: NOW,
      }),
    ).toMatchObject({
      health: plus(iso(NOW), 30_000),
      drift: plus(iso(NOW), 30_000),
    });
    const applied = release({
      spec: { healthAssessment: { interval: '30s' }, driftDetection: { interval: '30s' } },
      status: {
        lastAttempted: attempt(B),
        lastSuccessful: { ...attempt(B), phase: 'Succeeded' },
        conditions: [pending('Healthy'), pending('InSync')],
      },
    });
    expect(dueTimes(applied, NOW, { health: NOW, drift: NOW })).toMatchObject({
      health: plus(iso(NOW), 30_000),
      drift: plus(iso(NOW), 30_000),
    });
  });

  it('agrees with the observers: a wait is exactly where their verdict would be Pending because of the render', () => {
    const cases = [
      waitingAtWave([pending('Healthy'), pending('InSync')]),
      release({
        spec: { healthAssessment: {} },
        status: { conditions: [pending('Healthy'), pending('InSync')] },
      }),
      release({
        spec: { healthAssessment: {} },
        status: {
          lastAttempted: { ...attempt(B), phase: 'Failed' },
          lastSuccessful: { ...attempt(A), phase: 'Succeeded' },
          rollout: { renderRef: B, state: 'Failed' },
          conditions: [pending('Healthy'), pending('InSync')],
        },
      }),
      release({
        spec: { healthAssessment: {} },
        status: {
          lastAttempted: attempt(A),
          lastSuccessful: { ...attempt(A), phase: 'Succeeded' },
          rollout: { renderRef: A, state: 'RolledBack' },
          conditions: [pending('Healthy'), pending('InSync')],
        },
      }),
    ];
    for (const r of cases) {
      expect(healthWaitsForReconcile(r)).toBe(
        healthVerdict(r, { kind: 'notAssessed' }, NOW).condition.reason === 'Pending' &&
          healthRenderRef(r) === undefined,
      );
      expect(driftWaitsForReconcile(r)).toBe(planDriftCheck(r).kind === 'pending');
    }
  });

  it('observersNotified: a new current render, a newly applied render or a rollback; not an unchanged status', () => {
    const before = waitingAtWave([]);
    const withStatus = (status: Record<string, unknown>) =>
      release({ status: { ...before.status, ...status } });
    expect(
      observersNotified(before, withStatus({ lastSuccessful: { ...attempt(B), phase: 'Succeeded' } })),
    ).toBe(true);
    expect(
      observersNotified(before, withStatus({ lastAttempted: attempt(`sha256:${'c'.repeat(64)}`) })),
    ).toBe(true);
    expect(observersNotified(before, withStatus({ rollout: { renderRef: B, state: 'RolledBack' } }))).toBe(
      true,
    );
    expect(observersNotified(before, withStatus({ reconciledAt: '2026-01-01T12:00:00Z' }))).toBe(false);
    expect(observersNotified(undefined, before)).toBe(false);
  });

  it("observersNotified: a new reconcile write of a settled Release (the observers' interval checks ride on it)", () => {
    const settled = (reconciledAt: string) =>
      release({
        status: {
          reconciledAt,
          lastAttempted: { ...attempt(B), phase: 'Succeeded' },
          lastSuccessful: { ...attempt(B), phase: 'Succeeded' },
          rollout: { renderRef: B, state: 'Succeeded' },
          conditions: [condition('Applied', '2026-01-01T11:00:00Z')],
        },
      });
    const old = settled('2026-01-01T11:55:00Z');
    expect(observersNotified(old, settled('2026-01-01T12:00:00Z'))).toBe(true);
    // Another writer's update (the same reconciledAt): not a reconcile run.
    expect(observersNotified(old, settled('2026-01-01T11:55:00Z'))).toBe(false);
    // Not settled: a rollout in progress, Applied not True/Applied.
    const progressing = settled('2026-01-01T12:00:00Z');
    expect(
      observersNotified(
        old,
        release({
          status: { ...progressing.status, rollout: { renderRef: B, state: 'Progressing', wave: 0 } },
        }),
      ),
    ).toBe(false);
    expect(
      observersNotified(
        old,
        release({
          status: {
            ...progressing.status,
            conditions: [
              { ...condition('Applied', '2026-01-01T12:00:00Z'), status: 'False', reason: 'WaitingForSync' },
            ],
          },
        }),
      ),
    ).toBe(false);
  });
});
