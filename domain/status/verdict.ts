/**
 * The combined verdict (API.md "The combined verdict"; the seed text's
 * "Combine the signals"): ONE function used by the HTTP API, the CLI
 * (`convoy status`, `convoy wait`) and the dashboard.
 *
 * A Release is ready when:
 *   - Applied is True, and lastAttempted.renderRef == lastSuccessful.renderRef;
 *   - InSync is True;
 *   - Healthy is True and its reason is not Pending;
 *   - RolloutSucceeded (present, or required by spec.failurePolicy) is True
 *     and status.rollout.renderRef is the new render;
 *   - every condition's observedGeneration equals metadata.generation.
 *
 * Otherwise the verdict names the FIRST signal that is not there yet, in the
 * order Applied, NewRender, InSync, Healthy, RolloutSucceeded, and then the
 * generation of any other condition (LifecycleSucceeded, …).
 *
 * Decisions the texts leave open (written down here and in the report):
 *   - A condition is judged only when it is from the current spec: a condition
 *     whose observedGeneration differs from metadata.generation is reported at
 *     its place in the order as signal `ObservedGeneration`, kind `wait` — its
 *     status describes an older spec, so an old failure must not fail a
 *     `convoy wait` that follows an edit.
 *   - kind `wait`: a missing condition, a stale condition, a reason
 *     WaitingFor*, Pending or Progressing, status Unknown (the writer could not
 *     tell yet, e.g. ClusterNotReady; convoy retries), and a True condition that
 *     is not yet about the new render. kind `failure`: any other False.
 *   - NewRender (lastAttempted.renderRef differs from lastSuccessful.renderRef
 *     while Applied is True) is a failure when lastAttempted failed or the
 *     rollout was rolled back, otherwise a wait.
 *   - LifecycleSucceeded is not one of the signals; only its observedGeneration
 *     counts ("every condition").
 *   - Applied False is a wait while convoy retries the stop ("Retried with
 *     backoff" in the spec's table: SourceNotReady, ClusterNotReady,
 *     ValuesNotReady, DeployFailed, PruneFailed); it is a failure for the stops
 *     that are not retried (Unsupported, Unappliable, Pinned, WaveFailed,
 *     RolloutFailed, ClusterWaveFailed, HookFailed). `retrying: true` marks the
 *     retried ones so a reader can tell them from a first reconcile.
 *   - status.rollout of the current render (rollout.renderRef == the new
 *     render) counts even without RolloutSucceeded: state Progressing is a wait,
 *     Failed or RolledBack a failure (signal `Rollout`).
 *   - A Ready verdict says whether health was assessed: `health` is
 *     `NotConfigured` when Healthy is True NotConfigured (no
 *     spec.healthAssessment), so Ready then means applied and in sync only.
 *   - A suspended Release (spec.suspend: true) has its own verdict, kind
 *     `suspended`, signal `Suspended`: convoy applies nothing until
 *     it is resumed, so it is neither waiting for convoy nor failed. Suspending
 *     bumps metadata.generation and the controller-manager does not reconcile
 *     while suspended, so judging the conditions would only ever say "Waiting
 *     (ObservedGeneration)". The message says what the observers last
 *     reported, which keep running. After a resume the reconcile that handles
 *     the new generation sends the Release to both observers
 *     (domain/reconcile/conclude.ts), so every condition reaches the new
 *     generation within one run of each loop, not at their interval ticks.
 */
import type { Condition } from '../api/common.ts';
import type { Release } from '../api/objects.ts';
import { AppliedReason, ConditionType, HealthyReason } from './reasons.ts';
import { DEPENDENCY_RETRIED_REASONS, isDependencyWait } from './dependency-verdict.ts';

export type VerdictSignal =
  | 'Applied'
  | 'InSync'
  | 'Healthy'
  | 'RolloutSucceeded'
  | 'Rollout'
  | 'ObservedGeneration'
  | 'NewRender'
  | 'Suspended';
/** `suspended`: spec.suspend is true; nothing changes until the Release is resumed (signal `Suspended`). */
export type VerdictKind = 'wait' | 'failure' | 'suspended';
/** Whether the health loop judged the workloads (Assessed) or only reported that no assessment is configured. */
export type VerdictHealth = 'Assessed' | 'NotConfigured';

export type Verdict =
  | { readonly ready: true; readonly health: VerdictHealth; readonly message: string }
  | {
      readonly ready: false;
      readonly signal: VerdictSignal;
      readonly kind: VerdictKind;
      readonly message: string;
      /** Present and true when the stop is one convoy retries with backoff (kind is then `wait`). */
      readonly retrying?: true;
    };

/** Applied reasons of stops that are "Retried with backoff" (stops.ts): a wait, not a failure. */
const RETRIED_APPLIED_REASONS: ReadonlySet<string> = new Set([
  AppliedReason.SourceNotReady,
  AppliedReason.ClusterNotReady,
  AppliedReason.ValuesNotReady,
  AppliedReason.DeployFailed,
  AppliedReason.PruneFailed,
  ...DEPENDENCY_RETRIED_REASONS,
]);

/** The order in which the condition signals are judged; later conditions only count for their generation. */
const ORDERED_CONDITIONS = [
  ConditionType.Applied,
  ConditionType.InSync,
  ConditionType.Healthy,
  ConditionType.RolloutSucceeded,
] as const;

const notReady = (signal: VerdictSignal, kind: VerdictKind, message: string): Verdict => ({
  ready: false,
  signal,
  kind,
  message,
});

/** A reason that means "not there yet" rather than "went wrong". */
export function isWaitReason(reason: string): boolean {
  const waiting = reason.startsWith('WaitingFor') || reason === 'Pending' || reason === 'Progressing';
  return waiting || isDependencyWait(reason);
}

function describe(c: Condition): string {
  return c.message === ''
    ? `${c.type} is ${c.status} (${c.reason})`
    : `${c.type} is ${c.status} (${c.reason}): ${c.message}`;
}

/**
 * Judges one condition that must be True. Returns undefined when it is True
 * and current; `acceptTrue` may refuse a True condition (then it is a wait).
 */
function judge(
  type: (typeof ORDERED_CONDITIONS)[number],
  condition: Condition | undefined,
  generation: number | undefined,
  missing: string,
  acceptTrue: (c: Condition) => string | undefined = () => undefined,
): Verdict | undefined {
  if (condition === undefined) return notReady(type, 'wait', `${type} is not reported yet: ${missing}`);
  const stale = staleness(condition, generation);
  if (stale !== undefined) return notReady('ObservedGeneration', 'wait', stale);
  if (condition.status === 'True') {
    const refused = acceptTrue(condition);
    return refused === undefined ? undefined : notReady(type, 'wait', refused);
  }
  const kind: VerdictKind =
    condition.status === 'Unknown' || isWaitReason(condition.reason) ? 'wait' : 'failure';
  return notReady(type, kind, describe(condition));
}

function staleness(condition: Condition, generation: number | undefined): string | undefined {
  if (generation === undefined) {
    return `metadata.generation is not set, so ${condition.type} (observedGeneration ${condition.observedGeneration}) cannot be matched to the spec`;
  }
  if (condition.observedGeneration === generation) return undefined;
  return `${condition.type} is from generation ${condition.observedGeneration}, the spec is at generation ${generation}: its writer has not handled the current spec yet`;
}

export function combinedVerdict(release: Release): Verdict {
  const generation = release.metadata.generation;
  const status = release.status;
  const conditions = status?.conditions ?? [];
  const byType = (type: string) => conditions.find((c) => c.type === type);

  // 0. Suspended: its own verdict, whatever the conditions say.
  if (release.spec.suspend) return suspendedVerdict(release);

  // 1. Applied; a stop convoy retries is a wait.
  const applied = appliedVerdict(byType(ConditionType.Applied), generation);
  if (applied !== undefined) return applied;

  // 2. The newest render is the one applied.
  const newRender = status?.lastAttempted?.renderRef;
  const render = newRenderVerdict(status, byType(ConditionType.Applied)?.reason);
  if (render !== undefined) return render;

  // 3. InSync.
  const inSync = judge(
    ConditionType.InSync,
    byType(ConditionType.InSync),
    generation,
    'the drift loop has not checked this Release',
  );
  if (inSync !== undefined) return inSync;

  // 4. Healthy, and assessed (not Pending).
  const healthy = judge(
    ConditionType.Healthy,
    byType(ConditionType.Healthy),
    generation,
    'the health loop has not assessed this Release',
    (c) =>
      c.reason === HealthyReason.Pending
        ? `${describe(c)}: the current render is not assessed yet`
        : undefined,
  );
  if (healthy !== undefined) return healthy;

  // 5 and 6. The rollout of the new render.
  const rollout = rolloutVerdict(release, byType(ConditionType.RolloutSucceeded), newRender);
  if (rollout !== undefined) return rollout;

  // 7. Every other condition is from the current spec.
  const judged = new Set<string>(ORDERED_CONDITIONS);
  for (const c of conditions) {
    if (judged.has(c.type)) continue;
    const stale = staleness(c, generation);
    if (stale !== undefined) return notReady('ObservedGeneration', 'wait', stale);
  }

  const notConfigured = byType(ConditionType.Healthy)?.reason === HealthyReason.NotConfigured;
  return notConfigured
    ? {
        ready: true,
        health: 'NotConfigured',
        message: `render ${newRender} is applied and in sync at generation ${generation}; health is not assessed (Healthy True NotConfigured: no spec.healthAssessment)`,
      }
    : {
        ready: true,
        health: 'Assessed',
        message: `render ${newRender} is applied, in sync and healthy at generation ${generation}`,
      };
}

/** Step 1: Applied, judged; a stop convoy retries with backoff is a wait marked `retrying`. undefined: Applied is True and current. */
function appliedVerdict(
  condition: Condition | undefined,
  generation: number | undefined,
): Verdict | undefined {
  const applied = judge(
    ConditionType.Applied,
    condition,
    generation,
    'the controller-manager has not reconciled this Release',
  );
  if (
    applied !== undefined &&
    !applied.ready &&
    applied.signal === 'Applied' &&
    condition !== undefined &&
    RETRIED_APPLIED_REASONS.has(condition.reason)
  ) {
    return {
      ...applied,
      kind: 'wait',
      retrying: true,
      message: `${applied.message} (convoy retries this with backoff)`,
    };
  }
  return applied;
}

/**
 * Step 2: the newest render (status.lastAttempted.renderRef) is the one applied
 * (status.lastSuccessful.renderRef); when not, a failure if it failed or was rolled back, else a
 * wait. undefined: it is.
 */
function newRenderVerdict(status: Release['status'], appliedReason: string | undefined): Verdict | undefined {
  const attempted = status?.lastAttempted;
  const newRender = attempted?.renderRef;
  const successful = status?.lastSuccessful?.renderRef;
  if (newRender !== undefined && successful !== undefined && newRender === successful) return undefined;
  const failed = attempted?.phase === 'Failed' || appliedReason === AppliedReason.RolledBack;
  const why =
    newRender === undefined
      ? 'status.lastAttempted.renderRef is not set: no render was made yet'
      : successful === undefined
        ? `the newest render ${newRender} (status.lastAttempted.renderRef) was never applied: status.lastSuccessful.renderRef is not set`
        : `the newest render ${newRender} (status.lastAttempted.renderRef) is not the applied one ${successful} (status.lastSuccessful.renderRef)`;
  const detail =
    attempted?.failure !== undefined
      ? `; lastAttempted failed at ${attempted.failure.stage} (${attempted.failure.reason}): ${attempted.failure.message}`
      : appliedReason === AppliedReason.RolledBack
        ? '; the rollout was rolled back to the last healthy render'
        : '';
  return notReady('NewRender', failed ? 'failure' : 'wait', `${why}${detail}`);
}

/**
 * Steps 5 and 6: RolloutSucceeded, when present or required by spec.failurePolicy, for the new
 * render; then status.rollout of the new render, whether or not RolloutSucceeded is reported.
 * undefined: the rollout does not hold the Release back.
 */
function rolloutVerdict(
  release: Release,
  condition: Condition | undefined,
  newRender: string | undefined,
): Verdict | undefined {
  const status = release.status;
  if (condition !== undefined || release.spec.failurePolicy !== undefined) {
    const verdict = judge(
      ConditionType.RolloutSucceeded,
      condition,
      release.metadata.generation,
      'spec.failurePolicy is set but the rollout is not reported',
      () => {
        const rolledOut = status?.rollout?.renderRef;
        if (rolledOut === newRender) return undefined;
        return rolledOut === undefined
          ? `RolloutSucceeded is True but status.rollout.renderRef is not set; waiting for the rollout of ${newRender}`
          : `RolloutSucceeded is True for render ${rolledOut}, not for the new render ${newRender} (status.rollout.renderRef)`;
      },
    );
    // False Progressing waits; False Failed or RolledBack is a failure.
    if (verdict !== undefined) return verdict;
  }

  const rolloutState = status?.rollout;
  if (
    rolloutState === undefined ||
    rolloutState.renderRef !== newRender ||
    rolloutState.state === 'Succeeded'
  )
    return undefined;
  const wave = rolloutState.wave === undefined ? '' : ` at wave ${rolloutState.wave}`;
  return rolloutState.state === 'Progressing'
    ? notReady('Rollout', 'wait', `the rollout of ${newRender} is Progressing${wave} (status.rollout.state)`)
    : notReady(
        'Rollout',
        'failure',
        `the rollout of ${newRender} is ${rolloutState.state}${wave} (status.rollout.state)`,
      );
}

/** spec.suspend: true. The message names how to resume and what the observers last reported. */
function suspendedVerdict(release: Release): Verdict {
  const status = release.status;
  const name = release.metadata.name;
  const namespace = release.metadata.namespace;
  const resume = `convoy resume ${name}${namespace === undefined ? '' : ` -n ${namespace}`}`;
  const applied = status?.lastSuccessful?.renderRef;
  const observed = [ConditionType.InSync, ConditionType.Healthy]
    .map((type) => status?.conditions?.find((c) => c.type === type))
    .filter((c): c is Condition => c !== undefined)
    .map((c) => `${c.type} ${c.status} (${c.reason})`);
  const last = [
    applied === undefined ? 'no render was applied yet' : `render ${applied} was applied last`,
    ...(observed.length > 0 ? [`the observers last reported ${observed.join(', ')}`] : []),
  ].join('; ');
  return {
    ready: false,
    signal: 'Suspended',
    kind: 'suspended',
    message: `reconcile is suspended (spec.suspend: true): convoy applies nothing until \`${resume}\`; ${last}`,
  };
}
