import { AppliedReason, FailureStage } from '../status/reasons.ts';

/**
 * The rows of "Where a reconcile can stop" (status-and-conditions.txt), as data.
 * Every way a reconcile ends short of "All steps done" is one of these; the
 * single mapping from a stop to status and Outcome lives in conclude.ts.
 */
export interface StopRow {
  /** failure.stage; undefined for a wait (phase stays empty). */
  stage: FailureStage | undefined;
  reason: AppliedReason;
  /** "Retried with backoff": yes → Outcome retry; no → stop (or a recheck for waits that poll). */
  retry: boolean;
  /** Waits that poll the cluster are rechecked after this many ms (at most 10 s for a rollout). */
  recheckMs?: number;
}

const failed = (stage: FailureStage, reason: AppliedReason, retry: boolean): StopRow => ({
  stage,
  reason,
  retry,
});
const waiting = (reason: AppliedReason, recheckMs?: number): StopRow => ({
  stage: undefined,
  reason,
  retry: false,
  ...(recheckMs === undefined ? {} : { recheckMs }),
});

/** The longest a Progressing rollout waits before it is checked again. */
export const ROLLOUT_RECHECK_MS = 10_000;

/** The safety recheck of a Release waiting for its dependencies; the relay's message on their change is what wakes it. */
export const DEPENDENCY_RECHECK_MS = 5 * 60_000;

export const Stops = {
  sourceFailed: failed(FailureStage.SourceResolution, AppliedReason.SourceNotReady, true),
  sourceUnsupported: failed(FailureStage.SourceResolution, AppliedReason.Unsupported, false),
  /** The artifact's signature does not verify (spec.source.helm.verify): nothing rendered, not retried until the next reconcile (docs/oci-sources.md). */
  sourceUnverified: failed(FailureStage.SourceResolution, AppliedReason.SourceNotReady, false),
  clusterNotReady: failed(FailureStage.ClusterResolution, AppliedReason.ClusterNotReady, true),
  valuesNotReady: failed(FailureStage.Rendering, AppliedReason.ValuesNotReady, true),
  renderFailed: failed(FailureStage.Rendering, AppliedReason.DeployFailed, true),
  renderUnsupported: failed(FailureStage.Rendering, AppliedReason.Unsupported, false),
  pinNotAvailable: failed(FailureStage.Rendering, AppliedReason.Pinned, false),
  pinUnreadable: failed(FailureStage.Rendering, AppliedReason.DeployFailed, false),
  /** The convoy.dev/pin annotation is not a renderRef: no render can be loaded for it (docs/decisions.md). */
  pinInvalid: failed(FailureStage.Rendering, AppliedReason.Pinned, false),
  /** The status convoy computed was refused by the Release CRD: a convoy bug or bad input copied into it; not retried. */
  statusRefused: failed(FailureStage.Syncing, AppliedReason.DeployFailed, false),
  waitingForSync: waiting(AppliedReason.WaitingForSync),
  waitingForClusterWave: waiting(AppliedReason.WaitingForClusterWave, ROLLOUT_RECHECK_MS),
  /** A dependency is unmet: the relay wakes the Release when one's verdict changes; the recheck is only a safety net. */
  dependencyNotReady: waiting(AppliedReason.DependencyNotReady, DEPENDENCY_RECHECK_MS),
  dependencyNotFound: failed(FailureStage.Syncing, AppliedReason.DependencyNotFound, true),
  /** Not retried: the relay wakes the members when one's spec changes. */
  dependencyCycle: failed(FailureStage.Syncing, AppliedReason.DependencyCycle, false),
  dependencyTooDeep: failed(FailureStage.Syncing, AppliedReason.DependencyTooDeep, false),
  dependencyTimeout: failed(FailureStage.Syncing, AppliedReason.DependencyTimeout, true),
  /** Retried: labelling the dependency's namespace (which the relay does not watch) fixes it. */
  dependencyNotAllowed: failed(FailureStage.Syncing, AppliedReason.DependencyNotAllowed, true),
  clusterWaveTimedOut: failed(FailureStage.Syncing, AppliedReason.ClusterWaveFailed, false),
  dryRunRejected: failed(FailureStage.Syncing, AppliedReason.Unappliable, false),
  storeWriteFailed: failed(FailureStage.Syncing, AppliedReason.DeployFailed, true),
  waitingForHook: waiting(AppliedReason.WaitingForHook, ROLLOUT_RECHECK_MS),
  hookFailed: failed(FailureStage.HookFailed, AppliedReason.HookFailed, false),
  applyFailed: failed(FailureStage.Syncing, AppliedReason.DeployFailed, true),
  waitingForWaveHealth: waiting(AppliedReason.WaitingForWaveHealth, ROLLOUT_RECHECK_MS),
  waveTimedOut: failed(FailureStage.Syncing, AppliedReason.WaveFailed, false),
  rolloutFailed: failed(FailureStage.Syncing, AppliedReason.RolloutFailed, false),
  /** The rollout failed and the last healthy render was applied again: Applied is True. */
  rolledBack: failed(FailureStage.Syncing, AppliedReason.RolledBack, false),
  pruneFailed: failed(FailureStage.Syncing, AppliedReason.PruneFailed, true),
  postSyncStartFailed: failed(FailureStage.Syncing, AppliedReason.DeployFailed, true),
} as const satisfies Record<string, StopRow>;

export type StopName = keyof typeof Stops;

/**
 * Errors carry their own verdict: an error whose `retryable` is false is a
 * configuration problem (Unsupported) that retrying cannot fix. Adapters mark
 * their terminal errors so; anything else a step throws is transient.
 */
export function isTerminal(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { retryable?: unknown }).retryable === false
  );
}

/** A source whose signature did not verify (adapters/source/errors.ts SourceVerificationError): terminal, reason SourceNotReady. */
export function isUnverified(error: unknown): boolean {
  return isTerminal(error) && (error as { unverified?: unknown }).unverified === true;
}

/**
 * A request that got no answer at all (refused, reset, timed out): the cluster is not
 * reachable. The reconcile's first request to a cluster it probed within the last 30 s
 * reports it as ClusterNotReady, as the probe would have (docs/decisions.md).
 */
export function isUnreachable(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { unreachable?: unknown }).unreachable === true
  );
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
