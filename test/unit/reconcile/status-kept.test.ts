// The convoy-release fields a write keeps as it found them (domain/reconcile/slice-as-found.ts):
// a progress write and a recheck write change only their own fields, and the stop added for a
// status the CRD refused (Stops.statusRefused) keeps what the server accepted before.
import { describe, expect, it } from 'vitest';
import { concludeProgress, concludeStatusRefused } from '../../../domain/reconcile/conclude.ts';
import { recheckSlice } from '../../../domain/reconcile/recheck.ts';
import { FieldManager } from '../../../domain/status/field-managers.ts';
import { ownedFields } from '../../../domain/status/slices.ts';
import { attempt, NOW, RENDER_A, RENDER_B, release } from '../observe/fixtures.ts';

const T = '2026-11-29T09:00:00Z';

/** A Release with every convoy-release field set, and a condition of another writer. */
function full() {
  return release(
    { syncPolicy: { mode: 'Manual' } },
    {
      observedGeneration: 3,
      reconciledAt: T,
      lastAttempted: attempt(RENDER_B),
      lastSuccessful: attempt(RENDER_A),
      lastHealthy: attempt(RENDER_A),
      rollout: { renderRef: RENDER_B, state: 'Progressing', wave: 0 },
      pin: { renderRef: RENDER_A, state: 'Active' },
      waves: [{ wave: 0, objects: 1, state: 'Applied', appliedAt: T }],
      lifecycle: { hooks: [] },
      resolvedRetentionPolicy: { maxRenders: 5, maxAge: '24h' },
      lastHandledSyncAt: T,
      lastHandledForceSyncAt: T,
      conditions: [
        {
          type: 'Applied',
          status: 'False',
          reason: 'WaitingForWaveHealth',
          message: 'wave 1 waits',
          lastTransitionTime: T,
          observedGeneration: 3,
        },
        {
          type: 'Healthy',
          status: 'True',
          reason: 'Healthy',
          message: '',
          lastTransitionTime: T,
          observedGeneration: 3,
        },
      ],
    },
  );
}

describe('fields a write keeps as it found them', () => {
  it('a progress write changes lastAttempted only; every other owned field and condition stays, no foreign condition', () => {
    const r = full();
    const slice = concludeProgress(
      { release: r, now: NOW, resolved: { renderRef: RENDER_B } },
      { total: 3, checked: 3, applied: 1 },
      NOW,
    );
    for (const key of ownedFields[FieldManager.release])
      if (key !== 'lastAttempted') expect(slice[key], key).toEqual(r.status?.[key]);
    expect(slice.lastAttempted?.phase).toBe('Syncing');
    expect(slice.conditions.map((c) => c.type)).toEqual(['Applied']);
  });

  it('a recheck write changes reconciledAt and lastAttempted.attemptedAt only', () => {
    const r = full();
    const slice = recheckSlice(r, NOW);
    for (const key of ownedFields[FieldManager.release]) {
      if (key !== 'lastAttempted' && key !== 'reconciledAt') expect(slice[key], key).toEqual(r.status?.[key]);
    }
    expect(slice.lastAttempted).toEqual({ ...r.status?.lastAttempted, attemptedAt: '2026-11-29T10:00:00Z' });
    expect(slice.conditions.map((c) => c.type)).toEqual(['Applied']);
  });

  it('a status the CRD refused → Syncing / DeployFailed naming it, not retried, nothing copied from the annotations, nobody told', () => {
    const d = concludeStatusRefused(full(), NOW, 'status.lastAttempted.renderRef: Invalid value', {
      maxRenders: 5,
      maxAge: '24h',
    });
    expect(d.slice.lastAttempted?.failure).toMatchObject({
      stage: 'Syncing',
      reason: 'DeployFailed',
      message: 'status.lastAttempted.renderRef: Invalid value',
    });
    expect(d.outcome.kind).toBe('stop');
    expect(d.slice.pin).toBeUndefined();
    expect(d.notify).toEqual([]);
  });
});
