// Which reconciles tell the observers at once (domain/reconcile/conclude.ts): an apply of a new
// render, a correction (the same render applied again over drifted objects) and a new generation
// (a resume) — so InSync and Healthy are recomputed right away, not at their interval.
import { describe, expect, it } from 'vitest';
import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import { conclude, type ReconcileEnd } from '../../../domain/reconcile/conclude.ts';
import { halt } from '../../../domain/reconcile/halt.ts';
import { observersNotified } from '../../../domain/relay/timers.ts';

const T = '2026-11-29T10:00:00Z';
const REF = `sha256:${'a'.repeat(64)}`;
const OTHER = `sha256:${'b'.repeat(64)}`;
const GEN = 4;

function release(observedGeneration: number, renderRef = REF): Release {
  const parsed = parseRelease({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: { name: 'web', namespace: 'team-a', generation: GEN },
    spec: {
      cluster: { name: 'prod' },
      source: { git: { url: 'https://git.example.com/apps.git', ref: { branch: 'main' } } },
    },
    status: {
      observedGeneration,
      lastAttempted: { attemptedAt: T, phase: 'Succeeded', renderRef },
      lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef },
      rollout: { renderRef, state: 'Succeeded' },
      conditions: [
        {
          type: 'Applied',
          status: 'True',
          reason: 'Applied',
          message: '',
          lastTransitionTime: T,
          observedGeneration,
        },
      ],
    },
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

function end(r: Release, written: number, extra: Partial<ReconcileEnd> = {}): ReconcileEnd {
  return {
    release: r,
    now: new Date(T),
    resolved: { renderRef: REF },
    retention: { maxRenders: 10, maxAge: '720h' },
    progress: { rollout: { renderRef: REF, state: 'Succeeded' }, waves: [], written },
    ...extra,
  };
}

describe('conclude: who is told at once', () => {
  it("an unchanged render with nothing written at an already handled generation: settled, the observers' interval checks ride on it", () => {
    const d = conclude(end(release(GEN), 0));
    expect(d.notify.sort()).toEqual(['drift', 'health']);
    expect(d.notifyCause).toBe(`settled ${REF}: the observers' interval checks ride on this reconcile`);
  });

  it('nothing rides on a run that is not settled: a stop, a rollout in progress, a wait', () => {
    expect(
      conclude(end(release(GEN), 0, { halt: halt('sourceFailed', 'git fetch failed'), progress: undefined }))
        .notify,
    ).toEqual([]);
    expect(
      conclude(
        end(release(GEN), 0, {
          progress: { rollout: { renderRef: REF, state: 'Progressing', wave: 0 }, waves: [], written: 0 },
        }),
      ).notify,
    ).toEqual([]);
    expect(
      conclude(
        end(release(GEN), 0, { halt: halt('waitingForSync', 'manual sync mode'), progress: undefined }),
      ).notify,
    ).toEqual([]);
  });

  it('a correction — the same render, objects written again — tells drift and health, cause "corrected …"', () => {
    const d = conclude(end(release(GEN), 2));
    expect(d.notify.sort()).toEqual(['drift', 'health']);
    expect(d.notifyCause).toBe(`corrected ${REF}: 2 objects applied again`);
  });

  it('a new generation (a resume) with the render unchanged tells drift and health, cause "generation …"', () => {
    const d = conclude(end(release(GEN - 2), 0));
    expect(d.notify.sort()).toEqual(['drift', 'health']);
    expect(d.notifyCause).toBe(`generation ${GEN} handled (was ${GEN - 2})`);
  });

  it('a new generation tells them also when the reconcile stops (their conditions must reach the generation too)', () => {
    const d = conclude(
      end(release(GEN - 1), 0, { halt: halt('sourceFailed', 'git fetch failed'), progress: undefined }),
    );
    expect(d.notify.sort()).toEqual(['drift', 'health']);
  });

  it('a new render keeps its cause "applied <renderRef>"', () => {
    const d = conclude(end(release(GEN, OTHER), 3));
    expect(d.notifyCause).toBe(`applied ${REF}`);
  });

  it("agrees with the relay: whenever the relay counts a reconcile write as the observers' sends, that run sent both", () => {
    const later = new Date(Date.parse(T) + 300_000);
    const cases: ReconcileEnd[] = [
      { ...end(release(GEN), 0), now: later },
      { ...end(release(GEN), 2), now: later },
      { ...end(release(GEN - 1), 0), now: later },
      { ...end(release(GEN, OTHER), 3), now: later },
      {
        ...end(release(GEN), 0, { halt: halt('sourceFailed', 'git fetch failed'), progress: undefined }),
        now: later,
      },
      {
        ...end(release(GEN), 0, {
          progress: { rollout: { renderRef: REF, state: 'Progressing', wave: 0 }, waves: [], written: 0 },
        }),
        now: later,
      },
      {
        ...end(release(GEN), 0, { halt: halt('waitingForSync', 'manual sync mode'), progress: undefined }),
        now: later,
      },
    ];
    let counted = 0;
    for (const e of cases) {
      const d = conclude(e);
      const next = { ...e.release, status: { ...e.release.status, ...d.slice } } as Release;
      if (!observersNotified(e.release, next)) continue;
      counted++;
      expect(d.notify.sort()).toEqual(['drift', 'health']);
    }
    // Settled, corrected, a new generation, a new render; not a stop, a rollout in progress or a
    // wait (the observers' own timers go on).
    expect(counted).toBe(4);
  });
});
