/**
 * The order of each loop's effects around its status write, from the decision alone (no cluster):
 * the loop's decision (its handler's pure part) → commitSteps, the steps the runtime performs
 * (functions/runtime/run-commit.ts), with the mark it stamps the write with. The write carries the
 * run's mark — and so closes the Lease — only when it is the run's last act and the Lease has
 * nothing to record; anything that must follow it makes it carry the mark after (docs/decisions.md,
 * "A run decides, the runtime commits").
 */
import { describe, expect, it } from 'vitest';
import type { ReleaseSet } from '../../../domain/api/release-set.ts';
import type { FleetDecision } from '../../../domain/fleet/decide-fleet.ts';
import type { ReconcileResult } from '../../../domain/reconcile/reconcile.ts';
import { closesByStatus, markAfter } from '../../../domain/runtime/lease-close.ts';
import type { LeaseRecord } from '../../../domain/runtime/lease.ts';
import { done, requeueAfter, retry, stop } from '../../../domain/runtime/outcome.ts';
import { commitSteps, type MarkedRun, type RunDecision } from '../../../domain/runtime/run-decision.ts';
import type { EventIntent } from '../../../domain/status/release-events.ts';
import { driftDecision } from '../../../functions/drift/drift-decision.ts';
import { fleetRunDecision } from '../../../functions/fleet/fleet-record.ts';
import { healthDecision } from '../../../functions/health/health-decision.ts';
import { reconcileDecision, recheckDecision } from '../../../functions/reconcile/reconcile-decision.ts';
import { hintKey } from '../../../functions/runtime/applied-hint.ts';
import { releaseSliceWith } from '../../harness/release-slice.ts';
import { releaseSet } from '../fleet/fleet-fixtures.ts';
import {
  appliedStatus,
  configMap,
  deployment,
  liveDeploymentDone,
  liveDeploymentNew,
  NOW,
  RENDER_A,
  release,
} from '../observe/fixtures.ts';

const MARK = '2026-11-29T10:00:05Z';
const AFTER = markAfter(MARK);
const MESSAGE = 'm-1';

/** The run's Lease: nothing recorded (a run's write may close it), or what `record` says. */
const lease = (record: Partial<LeaseRecord> = {}): MarkedRun => {
  const held: LeaseRecord = { followUp: undefined, failures: 0, handledSentAt: undefined, ...record };
  return { mark: MARK, closes: (outcome) => closesByStatus(outcome, held, MESSAGE) };
};

/**
 * The commit's steps as words: `events DriftDetected`, `notify drift (sealed)`, `write @mark` (the
 * run's mark: the write may close the Lease) or `write @mark+1s` (the mark after: it closes nothing).
 */
function steps<S>(decision: RunDecision<S>, run: MarkedRun = lease()): string[] {
  return commitSteps(decision, run).map((step) => {
    if (step.step === 'write')
      return step.stamp === MARK
        ? 'write @mark'
        : step.stamp === AFTER
          ? 'write @mark+1s'
          : `write ${String(step.stamp)}`;
    const effect = step.effect;
    if (effect.kind === 'events') return `events ${effect.intents.map((e) => e.reason).join(',')}`;
    return `notify ${effect.loop}${effect.applied === undefined ? '' : ' (sealed)'}`;
  });
}

const renderApplied: EventIntent = {
  type: 'Normal',
  reason: 'RenderApplied',
  action: 'Apply',
  note: 'applied ConfigMap team-a/settings, Deployment team-a/web',
};
const appliedCondition = {
  type: 'Applied',
  status: 'True' as const,
  reason: 'Applied',
  message: 'applied',
  lastTransitionTime: '2026-11-29T10:00:00Z',
  observedGeneration: 3,
};

function reconciled(
  over: Partial<Extract<ReconcileResult, { kind: 'reconciled' }>> = {},
): Extract<ReconcileResult, { kind: 'reconciled' }> {
  return {
    kind: 'reconciled',
    renderRef: RENDER_A,
    warnings: [],
    slice: releaseSliceWith({
      reconciledAt: '2026-11-29T10:00:00Z',
      conditions: [appliedCondition],
      lastAttempted: { attemptedAt: '2026-11-29T10:00:00Z', phase: 'Succeeded', renderRef: RENDER_A },
    }),
    outcome: done(),
    notify: ['drift', 'health'],
    notifyCause: `applied ${RENDER_A}`,
    observed: {
      renderRef: RENDER_A,
      objects: [configMap(), deployment()],
      live: [configMap(), liveDeploymentDone()],
    },
    ...over,
  };
}

const ports = { now: () => NOW, retentionDefault: { maxRenders: 10, maxAge: '720h' } };
const reconcileInput = (over: Partial<Parameters<typeof reconcileDecision>[0]> = {}) => ({
  release: release(),
  result: reconciled(),
  events: [renderApplied],
  noticesWait: false,
  hintKey: hintKey('the functions key'),
  ports,
  ...over,
});

describe("the reconcile: the status write is the run's last act unless a notice needs it written", () => {
  it('notices that carry the sealed hint go before the write, after the Events; the write closes the Lease', () => {
    expect(steps(reconcileDecision(reconcileInput()))).toEqual([
      'events RenderApplied',
      'notify drift (sealed)',
      'notify health (sealed)',
      'write @mark',
    ]);
  });

  it('notices without a hint (no key, or no answers to seal) follow the write, which then keeps the Lease', () => {
    expect(steps(reconcileDecision(reconcileInput({ hintKey: undefined })))).toEqual([
      'events RenderApplied',
      'write @mark+1s',
      'notify drift',
      'notify health',
    ]);
    expect(steps(reconcileDecision(reconcileInput({ result: reconciled({ observed: undefined }) })))).toEqual(
      ['events RenderApplied', 'write @mark+1s', 'notify drift', 'notify health'],
    );
  });

  it("a first deploy whose notices wait for the rollout's end (a burst) sends none; the write closes the Lease", () => {
    expect(steps(reconcileDecision(reconcileInput({ noticesWait: true })))).toEqual([
      'events RenderApplied',
      'write @mark',
    ]);
  });

  it('an Outcome the Lease must record (a retry, a recheck it does not name yet) keeps the Lease whatever else', () => {
    const failing = reconcileInput({
      result: reconciled({ outcome: retry(new Error('source not ready')), notify: [] }),
    });
    expect(steps(reconcileDecision(failing))).toEqual(['events RenderApplied', 'write @mark+1s']);
    const recheck = reconcileInput({
      result: reconciled({ outcome: requeueAfter(10_000, 'wave 0 Progressing'), notify: [] }),
    });
    expect(steps(reconcileDecision(recheck))).toEqual(['events RenderApplied', 'write @mark+1s']);
    expect(steps(reconcileDecision(recheck), lease({ followUp: { messageId: MESSAGE } }))).toEqual([
      'events RenderApplied',
      'write @mark',
    ]);
  });

  it("the write carries the mark as reconciledAt; without a mark the reconcile's own time", () => {
    const decision = reconcileDecision(reconcileInput());
    expect(decision.write?.slice(MARK).slice).toMatchObject({ reconciledAt: MARK });
    expect(decision.write?.slice(undefined).slice).toMatchObject({ reconciledAt: '2026-11-29T10:00:00Z' });
  });

  it('a refused status: Applied False/DeployFailed is written alone, and the notices that needed the first write are not sent', () => {
    const decision = reconcileDecision(reconcileInput({ hintKey: undefined }));
    const fallback = decision.onRefused?.decide('status.waves: Too big');
    if (fallback === undefined) throw new Error('no fallback');
    expect(steps(fallback)).toEqual(['write @mark']);
    expect(fallback.write?.slice(MARK).slice.conditions.find((c) => c.type === 'Applied')).toMatchObject({
      status: 'False',
      reason: 'DeployFailed',
    });
  });

  it("the Progressing recheck writes this attempt's time only: the write closes the Lease when the Lease names its message", () => {
    const waiting = { outcome: requeueAfter(10_000, 'wave 0 Progressing'), slice: releaseSliceWith() };
    expect(steps(recheckDecision(waiting), lease({ followUp: { messageId: MESSAGE } }))).toEqual([
      'write @mark',
    ]);
    expect(steps(recheckDecision(waiting))).toEqual(['write @mark+1s']);
  });
});

describe('drift: Events and the request to correct follow the InSync write', () => {
  const checked = (drifted: boolean) => ({
    kind: 'checked' as const,
    renderRef: RENDER_A,
    objects: [
      {
        object: deployment(),
        drift: drifted
          ? { state: 'Drifted' as const, paths: ['/spec/replicas'] }
          : { state: 'InSync' as const },
      },
    ],
  });
  const inSync = (status: 'True' | 'False', reason: string, message: string) => ({
    type: 'InSync',
    status,
    reason,
    message,
    lastTransitionTime: '2026-11-29T09:00:00Z',
    observedGeneration: 3,
  });

  it('drifted in mode Correct: the write keeps the Lease, then DriftDetected, then the reconcile is told', () => {
    const r = release({ driftDetection: { mode: 'Correct' } }, appliedStatus());
    expect(steps(driftDecision(r, checked(true), NOW))).toEqual([
      'write @mark+1s',
      'events DriftDetected',
      'notify reconcile',
    ]);
  });

  it('in sync again after Drifted: the write, then DriftResolved', () => {
    const r = release(
      {},
      {
        ...appliedStatus(),
        conditions: [inSync('False', 'Drifted', 'Deployment team-a/web: /spec/replicas')],
      },
    );
    expect(steps(driftDecision(r, checked(false), NOW))).toEqual(['write @mark+1s', 'events DriftResolved']);
  });

  it('a first InSync with no Event: the write closes the Lease, stamped with the mark as lastTransitionTime', () => {
    const decision = driftDecision(release({}, appliedStatus()), checked(false), NOW);
    expect(steps(decision)).toEqual(['write @mark']);
    expect(decision.write?.slice(MARK).slice.conditions[0]).toMatchObject({
      type: 'InSync',
      status: 'True',
      lastTransitionTime: MARK,
    });
  });

  it('InSync unchanged: no write; still drifted in mode Correct, the reconcile is told again', () => {
    const drifted = release({ driftDetection: { mode: 'Correct' } }, appliedStatus());
    const condition = driftDecision(drifted, checked(true), NOW).write?.slice(MARK).slice.conditions[0];
    const again = release(
      { driftDetection: { mode: 'Correct' } },
      { ...appliedStatus(), conditions: [condition] },
    );
    expect(steps(driftDecision(again, checked(true), NOW))).toEqual(['notify reconcile']);
    const clean = driftDecision(release({}, appliedStatus()), checked(false), NOW).write?.slice(MARK).slice
      .conditions[0];
    expect(
      steps(driftDecision(release({}, { ...appliedStatus(), conditions: [clean] }), checked(false), NOW)),
    ).toEqual([]);
  });

  it('a refused InSync: Unknown/Pending is written, and a drifted Release in mode Correct still goes to the reconcile after it', () => {
    const fallback = driftDecision(
      release({ driftDetection: { mode: 'Correct' } }, appliedStatus()),
      checked(true),
      NOW,
    ).onRefused?.decide('refused');
    if (fallback === undefined) throw new Error('no fallback');
    expect(steps(fallback)).toEqual(['write @mark+1s', 'notify reconcile']);
    expect(fallback.write?.slice(AFTER).slice.conditions[0]).toMatchObject({
      status: 'Unknown',
      reason: 'Pending',
    });
  });
});

describe('health: every assessment is written, last, and its checkedAt is the mark', () => {
  const assessed = (live: Record<string, unknown>) => ({
    kind: 'assessed' as const,
    renderRef: RENDER_A,
    objects: [{ object: deployment(), live }],
  });
  const withChecks = (status: Record<string, unknown>) =>
    release({ healthAssessment: { progressDeadline: '2h' } }, status);

  it('Healthy: the write closes the Lease; healthSummary.checkedAt and lastTransitionTime are the mark', () => {
    const decision = healthDecision(withChecks(appliedStatus()), assessed(liveDeploymentDone()), NOW);
    expect(steps(decision)).toEqual(['write @mark']);
    const slice = decision.write?.slice(MARK).slice as {
      healthSummary?: { checkedAt?: string };
      conditions: { reason: string; lastTransitionTime: string }[];
    };
    expect(slice.healthSummary?.checkedAt).toBe(MARK);
    expect(slice.conditions[0]).toMatchObject({ reason: 'Healthy', lastTransitionTime: MARK });
  });

  it('Progressing: the 10-s recheck keeps the Lease unless the Lease already names its message', () => {
    const decision = healthDecision(withChecks(appliedStatus()), assessed(liveDeploymentNew()), NOW);
    expect(decision.outcome).toMatchObject({ kind: 'requeueAfter' });
    expect(steps(decision)).toEqual(['write @mark+1s']);
    expect(steps(decision, lease({ followUp: { messageId: MESSAGE } }))).toEqual(['write @mark']);
  });

  it('the cluster could not be read: the summary kept from the last check keeps its own checkedAt (the status then carries no mark of this run: the Lease is given back)', () => {
    const kept = {
      renderRef: RENDER_A,
      checkedAt: '2026-11-29T09:00:00Z',
      total: 1,
      healthy: 1,
      progressing: 0,
      degraded: 0,
      missing: 0,
      unknown: 0,
      objects: [],
    };
    const decision = healthDecision(
      withChecks(appliedStatus(RENDER_A, { healthSummary: kept })),
      { kind: 'clusterNotReady', renderRef: RENDER_A, message: 'unreachable' },
      NOW,
    );
    expect(steps(decision)).toEqual(['write @mark']);
    expect(
      (decision.write?.slice(MARK).slice as { healthSummary?: { checkedAt?: string } }).healthSummary
        ?.checkedAt,
    ).toBe('2026-11-29T09:00:00Z');
  });

  it('a refused slice: Healthy Unknown/Pending without healthSummary, alone', () => {
    const fallback = healthDecision(
      withChecks(appliedStatus()),
      assessed(liveDeploymentDone()),
      NOW,
    ).onRefused?.decide('refused');
    if (fallback === undefined) throw new Error('no fallback');
    expect(steps(fallback)).toEqual(['write @mark']);
    expect(fallback.write?.slice(MARK).slice).toMatchObject({
      healthSummary: undefined,
      conditions: [{ status: 'Unknown', reason: 'Pending' }],
    });
    expect(fallback.outcome).toEqual(stop());
  });
});

describe("the fleet: the set's status, then the Events that report it", () => {
  it('after the child writes: status, then Events about the set (its Lease has no mark: every run gives it back)', () => {
    const set: ReleaseSet = releaseSet({});
    const decision: FleetDecision = {
      status: {},
      writes: [],
      requeueAfterSeconds: 30,
      retry: false,
      stop: 'waitingForBatchHealth',
      events: [{ type: 'Normal', reason: 'StepStarted', action: 'Rollout', note: 'step canary' }],
    };
    const run = fleetRunDecision(set, decision, {
      failures: [],
      events: [
        { type: 'Warning', reason: 'RollbackUnavailable', action: 'Rollback', note: 'nothing to pin' },
      ],
    });
    expect(
      commitSteps(run).map((s) =>
        s.step === 'write'
          ? 'write'
          : `events ${s.effect.kind === 'events' ? s.effect.intents.map((e) => e.reason).join(',') : ''}`,
      ),
    ).toEqual(['write', 'events StepStarted,RollbackUnavailable']);
    expect(run.outcome).toMatchObject({ kind: 'requeueAfter', asNewMessage: true, delayMs: 30_000 });
  });
});
