/**
 * Where a ReleaseSet reconcile can stop (docs/fleet.md, "Where a reconcile can stop"), as data:
 * which condition and reason each stop sets, whether the runtime retries it with backoff, and when
 * the set is looked at again. The step function reports the stop it ended at; this is the ONE
 * table that maps a stop to its condition, reason, retry and recheck.
 */
import { FleetCondition, GeneratedReason, RolloutReason } from './reasons.ts';

export interface FleetStopRow {
  readonly condition: (typeof FleetCondition)[keyof typeof FleetCondition];
  readonly status: 'True' | 'False';
  readonly reason: string;
  /** true: the runtime retries with backoff (the error may go away by itself). */
  readonly retry: boolean;
  /** When the set is rechecked without any change: never (event driven), every ≤ 30 s, or at a computed time. */
  readonly recheck: 'none' | 'batch' | 'computed';
}

const generated = (reason: string, retry: boolean): FleetStopRow => ({
  condition: FleetCondition.Generated,
  status: 'False',
  reason,
  retry,
  recheck: 'none',
});
const rollout = (reason: string, recheck: FleetStopRow['recheck'] = 'none', retry = false): FleetStopRow => ({
  condition: FleetCondition.RolloutSucceeded,
  status: reason === RolloutReason.Succeeded ? 'True' : 'False',
  reason,
  retry,
  recheck,
});

/** The longest a batch waits before the set is looked at again (also woken by child changes). */
export const BATCH_RECHECK_SECONDS = 30;

export const FleetStops = {
  sourceNotReady: generated(GeneratedReason.SourceNotReady, true),
  sourceUnsupported: generated(GeneratedReason.Unsupported, false),
  clusterReadFailed: generated(GeneratedReason.ClusterNotReady, true),
  noClusters: generated(GeneratedReason.NoClusters, false),
  templateFailed: generated(GeneratedReason.TemplateFailed, false),
  invalidSpec: generated(GeneratedReason.InvalidSpec, false),
  nameConflict: generated(GeneratedReason.NameConflict, false),
  writeFailed: rollout(RolloutReason.DeployFailed, 'none', true),
  waitingForApproval: rollout(RolloutReason.WaitingForApproval),
  paused: rollout(RolloutReason.Paused),
  waitingForBatchHealth: rollout(RolloutReason.WaitingForBatchHealth, 'batch'),
  waitingForMinHealthyTime: rollout(RolloutReason.WaitingForMinHealthyTime, 'computed'),
  stepFailed: rollout(RolloutReason.StepFailed),
  rolledBack: rollout(RolloutReason.RolledBack),
  rollbackRequested: rollout(RolloutReason.RollbackRequested),
  succeeded: rollout(RolloutReason.Succeeded),
  /** The set is being deleted: nothing is written (its children follow their owner references). */
  deleting: rollout(RolloutReason.Deleting),
} as const satisfies Record<string, FleetStopRow>;

export type FleetStopName = keyof typeof FleetStops;
