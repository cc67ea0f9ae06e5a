import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../domain/api/common.ts';
import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import { driftEvents, MAX_NOTE, reconcileEvents } from '../../../domain/status/release-events.ts';
import type { ReleaseSlice } from '../../../domain/status/slices.ts';
import { releaseSliceWith } from '../../harness/release-slice.ts';

const T = '2026-11-29T10:00:00Z';
const A = `sha256:${'a'.repeat(64)}`;
const B = `sha256:${'b'.repeat(64)}`;
const cond = (type: string, status: Condition['status'], reason: string, message = ''): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: T,
  observedGeneration: 1,
});

function release(status: Record<string, unknown>): Release {
  const parsed = parseRelease({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: { name: 'app', namespace: 'team', generation: 1, uid: 'u1' },
    spec: { cluster: { name: 'c' }, source: { git: { url: 'https://g/x.git', ref: { branch: 'main' } } } },
    status,
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

const slice = (over: Partial<ReleaseSlice>): ReleaseSlice =>
  releaseSliceWith({
    lastAttempted: { attemptedAt: T, phase: 'Succeeded', renderRef: A },
    reconciledAt: T,
    conditions: [cond('Applied', 'True', 'Applied')],
    ...over,
  });

const none = { written: [], pruned: [] };

describe('reconcile Events', () => {
  it('RenderApplied names the objects written for a new render, and the Applied reason change', () => {
    const events = reconcileEvents(release({}), slice({}), {
      written: ['ConfigMap team/a', 'Deployment team/b'],
      pruned: [],
    });
    expect(events).toEqual([
      {
        type: 'Normal',
        reason: 'RenderApplied',
        action: 'Apply',
        note: `applied render ${A}: 2 object(s) written: ConfigMap team/a, Deployment team/b`,
      },
      { type: 'Normal', reason: 'Applied', action: 'Reconcile', note: 'Applied is True (Applied)' },
    ]);
  });

  it('DriftCorrected when a reconcile writes objects of the render already applied (a hand edit re-applied)', () => {
    const before = release({
      lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef: A },
      rollout: { renderRef: A, state: 'Succeeded' },
      conditions: [cond('Applied', 'True', 'Applied')],
    });
    const events = reconcileEvents(before, slice({}), { written: ['ConfigMap team/a'], pruned: [] });
    expect(events).toEqual([
      {
        type: 'Normal',
        reason: 'DriftCorrected',
        action: 'Apply',
        note: `re-applied 1 object(s) of render ${A} that differed on the cluster: ConfigMap team/a`,
      },
    ]);
  });

  it('nothing when nothing changed', () => {
    const before = release({
      lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef: A },
      conditions: [cond('Applied', 'True', 'Applied')],
    });
    expect(reconcileEvents(before, slice({}), none)).toEqual([]);
  });

  it('an Applied reason change: a failure (retried or not) is a Warning, a wait Normal, a rollback a Warning Rollback', () => {
    const before = release({ conditions: [cond('Applied', 'True', 'Applied')] });
    expect(
      reconcileEvents(
        before,
        slice({ conditions: [cond('Applied', 'False', 'SourceNotReady', 'git: 404')] }),
        none,
      ),
    ).toEqual([
      {
        type: 'Warning',
        reason: 'SourceNotReady',
        action: 'Reconcile',
        note: 'Applied is False (SourceNotReady): git: 404',
      },
    ]);
    expect(
      reconcileEvents(
        before,
        slice({ conditions: [cond('Applied', 'False', 'Unappliable', 'bad')] }),
        none,
      )[0],
    ).toMatchObject({ type: 'Warning', reason: 'Unappliable' });
    expect(
      reconcileEvents(
        before,
        slice({ conditions: [cond('Applied', 'True', 'RolledBack', 'wave 0 timed out')] }),
        none,
      )[0],
    ).toMatchObject({
      type: 'Warning',
      reason: 'RolledBack',
      action: 'Rollback',
    });
  });

  it('hook started, succeeded and failed', () => {
    const hook = (state: string) => ({
      name: 'migrate',
      phase: 'PreSync',
      renderRef: A,
      state,
      job: 'app-migrate-aaaaaa',
    });
    const before = release({
      lifecycle: { hooks: [hook('Running')] },
      conditions: [cond('Applied', 'True', 'Applied')],
    });
    const started = reconcileEvents(
      release({ conditions: [cond('Applied', 'True', 'Applied')] }),
      slice({ lifecycle: { hooks: [hook('Running')] } } as Partial<ReleaseSlice>),
      none,
    );
    expect(started).toEqual([
      {
        type: 'Normal',
        reason: 'HookStarted',
        action: 'RunHook',
        note: 'PreSync hook migrate started (Job app-migrate-aaaaaa)',
      },
    ]);
    const succeeded = reconcileEvents(
      before,
      slice({ lifecycle: { hooks: [hook('Succeeded')] } } as Partial<ReleaseSlice>),
      none,
    );
    expect(succeeded.map((e) => [e.type, e.reason])).toEqual([['Normal', 'HookSucceeded']]);
    const failed = reconcileEvents(
      before,
      slice({
        lifecycle: { hooks: [{ ...hook('Failed'), message: 'BackoffLimitExceeded' }] },
      } as Partial<ReleaseSlice>),
      none,
    );
    expect(failed).toEqual([
      {
        type: 'Warning',
        reason: 'HookFailed',
        action: 'RunHook',
        note: 'PreSync hook migrate failed (Job app-migrate-aaaaaa): BackoffLimitExceeded',
      },
    ]);
  });

  it('Pruned names the deleted objects; a long list is cut to 10 names and 1 KiB', () => {
    const before = release({
      lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef: B },
      conditions: [cond('Applied', 'True', 'Applied')],
    });
    const pruned = Array.from({ length: 40 }, (_, i) => `ConfigMap team/${'x'.repeat(80)}-${i}`);
    const [event] = reconcileEvents(before, slice({}), { written: [], pruned });
    expect(event).toMatchObject({ type: 'Normal', reason: 'Pruned', action: 'Prune' });
    expect(event.note.length).toBeLessThanOrEqual(MAX_NOTE);
    expect(event.note).toMatch(/^deleted 40 object\(s\) no longer in the render: /);
  });
});

describe('drift Events', () => {
  it('DriftDetected when InSync turns Drifted (or names other objects), DriftResolved when it is True again', () => {
    const inSync = release({ conditions: [cond('InSync', 'True', 'InSync')] });
    const drifted = cond('InSync', 'False', 'Drifted', 'ConfigMap team/a: /data/k differs');
    expect(driftEvents(inSync, drifted)).toEqual([
      {
        type: 'Warning',
        reason: 'DriftDetected',
        action: 'CheckDrift',
        note: 'ConfigMap team/a: /data/k differs',
      },
    ]);
    const already = release({ conditions: [drifted] });
    expect(driftEvents(already, drifted)).toEqual([]);
    expect(driftEvents(already, cond('InSync', 'True', 'InSync', 'all 1 objects match'))).toEqual([
      {
        type: 'Normal',
        reason: 'DriftResolved',
        action: 'CheckDrift',
        note: 'in sync again: all 1 objects match',
      },
    ]);
  });
});
