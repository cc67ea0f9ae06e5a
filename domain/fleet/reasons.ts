/**
 * The conditions of a ReleaseSet and their reasons. There is no Ready condition: Generated says
 * whether every child could be generated, RolloutSucceeded where the rollout is (docs/fleet.md).
 */
export const FleetCondition = {
  Generated: 'Generated',
  RolloutSucceeded: 'RolloutSucceeded',
} as const;

/** Generated False reasons; True is always Generated. */
export const GeneratedReason = {
  Generated: 'Generated',
  /** The template source could not be resolved; retried with backoff. */
  SourceNotReady: 'SourceNotReady',
  /** The template source is of a kind a ReleaseSet cannot pin (gitRepositoryRef); not retried. */
  Unsupported: 'Unsupported',
  /** Reading the Clusters failed; retried, nothing is deleted. */
  ClusterNotReady: 'ClusterNotReady',
  /** The selection matches no Cluster; nothing is written or deleted. */
  NoClusters: 'NoClusters',
  /** A child could not be generated (unknown variable, invalid Release); names the Cluster and the field. */
  TemplateFailed: 'TemplateFailed',
  /** A field of the set itself is wrong (a selector, a step that selects no Cluster, the name). */
  InvalidSpec: 'InvalidSpec',
  /** A child name <set>-<cluster> is taken by a Release the set does not own. */
  NameConflict: 'NameConflict',
} as const;
export type GeneratedReason = (typeof GeneratedReason)[keyof typeof GeneratedReason];

/** RolloutSucceeded reasons: True only for Succeeded. */
export const RolloutReason = {
  Succeeded: 'Succeeded',
  WaitingForBatchHealth: 'WaitingForBatchHealth',
  WaitingForMinHealthyTime: 'WaitingForMinHealthyTime',
  WaitingForApproval: 'WaitingForApproval',
  Paused: 'Paused',
  /** Writing a step's Releases failed; retried with backoff. */
  DeployFailed: 'DeployFailed',
  /** Failures over the budget, or the step past its deadline, with onFailure Halt. */
  StepFailed: 'StepFailed',
  /** The same with onFailure RollbackFleet: the updated Clusters went back to lastSucceededRevision. */
  RolledBack: 'RolledBack',
  /** A user asked for it (convoy.dev/rollback=<revision id>): the updated Clusters went back to lastSucceededRevision. */
  RollbackRequested: 'RollbackRequested',
  /** The set has a deletionTimestamp; the runtime writes nothing, not even status. */
  Deleting: 'Deleting',
} as const;
export type RolloutReason = (typeof RolloutReason)[keyof typeof RolloutReason];
