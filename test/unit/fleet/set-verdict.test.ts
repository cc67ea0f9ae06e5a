// The verdict of a ReleaseSet (wait rset, get rset, the HTTP API, the dashboard) and what approve and rollback write.
import { describe, expect, it } from 'vitest';
import type { ReleaseSet, ReleaseSetStatus } from '../../../domain/api/release-set.ts';
import { approvalFor, rollbackFor } from '../../../domain/fleet/operator-requests.ts';
import { setVerdict } from '../../../domain/fleet/set-verdict.ts';

const rev = (id: string) => ({ id, templateHash: 'h', source: { git: { url: 'u', commit: 'c' } } });
const cond = (
  type: string,
  status: 'True' | 'False' | 'Unknown',
  reason: string,
  observedGeneration = 2,
) => ({
  type,
  status,
  reason,
  message: `${reason} message`,
  lastTransitionTime: '2026-01-01T00:00:00Z',
  observedGeneration,
});
const set = (status: ReleaseSetStatus | undefined, generation = 2) =>
  ({ metadata: { name: 'web', namespace: 'fleet', generation }, status }) as Pick<
    ReleaseSet,
    'metadata' | 'status'
  >;
const at = (
  state: NonNullable<ReleaseSetStatus['rollout']>['state'],
  reason: string,
  extra: Partial<ReleaseSetStatus> = {},
): ReleaseSetStatus => ({
  observedGeneration: 2,
  revision: rev('b'),
  rollout: { state, step: 1, stepName: 'eu' },
  conditions: [
    cond('Generated', 'True', 'Generated'),
    cond('RolloutSucceeded', state === 'Succeeded' ? 'True' : 'False', reason),
  ],
  ...extra,
});

describe('setVerdict', () => {
  it('no status, or a status of an older generation, is a wait', () => {
    expect(setVerdict(set(undefined))).toMatchObject({ kind: 'wait', word: 'Pending' });
    expect(setVerdict(set({ ...at('Succeeded', 'Succeeded'), observedGeneration: 1 }))).toMatchObject({
      kind: 'wait',
    });
    expect(
      setVerdict(
        set({
          ...at('Succeeded', 'Succeeded'),
          conditions: [
            cond('Generated', 'True', 'Generated'),
            cond('RolloutSucceeded', 'True', 'Succeeded', 1),
          ],
        }),
      ),
    ).toMatchObject({ kind: 'wait' });
  });

  it('Generated False: retried stops are a wait, the others a failure (the stop table decides)', () => {
    const generated = (reason: string) =>
      set({
        ...at('Progressing', 'WaitingForBatchHealth'),
        conditions: [cond('Generated', 'False', reason)],
      });
    for (const reason of ['SourceNotReady', 'ClusterNotReady'])
      expect(setVerdict(generated(reason))).toMatchObject({ kind: 'wait', word: reason });
    for (const reason of ['InvalidSpec', 'TemplateFailed', 'NameConflict', 'NoClusters', 'Unsupported'])
      expect(setVerdict(generated(reason))).toMatchObject({ kind: 'failure', word: reason });
  });

  it('Succeeded is ready; Halted and RolledBack fail; Paused and WaitingForApproval are held; the rest waits', () => {
    expect(setVerdict(set(at('Succeeded', 'Succeeded')))).toMatchObject({ kind: 'ready', word: 'Succeeded' });
    expect(setVerdict(set(at('Halted', 'StepFailed')))).toMatchObject({
      kind: 'failure',
      word: 'Halted',
      message: 'revision b: StepFailed: StepFailed message',
    });
    expect(setVerdict(set(at('RolledBack', 'RollbackRequested')))).toMatchObject({
      kind: 'failure',
      word: 'RolledBack',
    });
    expect(setVerdict(set(at('Paused', 'Paused')))).toMatchObject({ kind: 'held', word: 'Paused' });
    expect(setVerdict(set(at('WaitingForApproval', 'WaitingForApproval')))).toMatchObject({
      kind: 'held',
      word: 'WaitingForApproval',
    });
    expect(setVerdict(set(at('Progressing', 'DeployFailed')))).toMatchObject({
      kind: 'wait',
      word: 'Progressing',
    });
  });
});

describe('approvalFor and rollbackFor', () => {
  it('approve names the waiting step and the revision; refuses when nothing waits or another step is named', () => {
    expect(approvalFor(set(at('WaitingForApproval', 'WaitingForApproval')), undefined)).toEqual({
      ok: true,
      value: 'eu@b',
      step: 'eu',
    });
    expect(approvalFor(set(at('WaitingForApproval', 'WaitingForApproval')), 'eu')).toMatchObject({
      ok: true,
      value: 'eu@b',
    });
    expect(approvalFor(set(at('WaitingForApproval', 'WaitingForApproval')), 'canary')).toEqual({
      ok: false,
      message: 'step canary of ReleaseSet fleet/web does not wait for approval: step eu does',
    });
    expect(approvalFor(set(at('Progressing', 'WaitingForBatchHealth')), undefined)).toEqual({
      ok: false,
      message: 'nothing of ReleaseSet fleet/web waits for approval: its rollout is Progressing at step eu',
    });
  });

  it('rollback names the current revision; refuses without an older succeeded revision', () => {
    expect(rollbackFor(set(at('Halted', 'StepFailed', { lastSucceededRevision: rev('a') })))).toEqual({
      ok: true,
      value: 'b',
      to: 'a',
    });
    expect(rollbackFor(set(at('Halted', 'StepFailed')))).toMatchObject({
      ok: false,
      message: expect.stringContaining('no revision of it has succeeded yet') as unknown,
    });
    expect(rollbackFor(set(at('Succeeded', 'Succeeded', { lastSucceededRevision: rev('b') })))).toMatchObject(
      { ok: false, message: expect.stringContaining('is the last that succeeded') as unknown },
    );
    expect(rollbackFor(set(undefined))).toMatchObject({ ok: false });
  });
});
