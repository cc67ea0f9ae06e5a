/** Every condition type convoy writes. There is deliberately no Ready condition. */
export const ConditionType = {
  Applied: 'Applied',
  RolloutSucceeded: 'RolloutSucceeded',
  LifecycleSucceeded: 'LifecycleSucceeded',
  InSync: 'InSync',
  Healthy: 'Healthy',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

/** Reasons of the Applied condition (status-and-conditions.txt, "Applied"). */
export const AppliedReason = {
  Applied: 'Applied',
  SourceNotReady: 'SourceNotReady',
  ValuesNotReady: 'ValuesNotReady',
  ClusterNotReady: 'ClusterNotReady',
  Unsupported: 'Unsupported',
  Unappliable: 'Unappliable',
  DeployFailed: 'DeployFailed',
  PruneFailed: 'PruneFailed',
  Pinned: 'Pinned',
  WaitingForSync: 'WaitingForSync',
  WaitingForWaveHealth: 'WaitingForWaveHealth',
  WaveFailed: 'WaveFailed',
  RolloutFailed: 'RolloutFailed',
  RolledBack: 'RolledBack',
  WaitingForClusterWave: 'WaitingForClusterWave',
  ClusterWaveFailed: 'ClusterWaveFailed',
  WaitingForHook: 'WaitingForHook',
  HookFailed: 'HookFailed',
  DependencyNotReady: 'DependencyNotReady',
  DependencyNotFound: 'DependencyNotFound',
  DependencyCycle: 'DependencyCycle',
  DependencyTooDeep: 'DependencyTooDeep',
  DependencyTimeout: 'DependencyTimeout',
  DependencyNotAllowed: 'DependencyNotAllowed',
} as const;
export type AppliedReason = (typeof AppliedReason)[keyof typeof AppliedReason];

/** Applied is True for these reasons and False for every other one. */
export const appliedTrueReasons: ReadonlySet<AppliedReason> = new Set([
  AppliedReason.Applied,
  AppliedReason.RolledBack,
]);

export const RolloutReason = {
  Succeeded: 'Succeeded',
  Progressing: 'Progressing',
  Failed: 'Failed',
  RolledBack: 'RolledBack',
} as const;
export type RolloutReason = (typeof RolloutReason)[keyof typeof RolloutReason];

export const LifecycleReason = {
  Succeeded: 'Succeeded',
  Running: 'Running',
  HookFailed: 'HookFailed',
} as const;
export type LifecycleReason = (typeof LifecycleReason)[keyof typeof LifecycleReason];

export const InSyncReason = {
  InSync: 'InSync',
  Drifted: 'Drifted',
  Pending: 'Pending',
  ClusterNotReady: 'ClusterNotReady',
} as const;
export type InSyncReason = (typeof InSyncReason)[keyof typeof InSyncReason];

export const HealthyReason = {
  Healthy: 'Healthy',
  NotConfigured: 'NotConfigured',
  Progressing: 'Progressing',
  Degraded: 'Degraded',
  Missing: 'Missing',
  Pending: 'Pending',
  ClusterNotReady: 'ClusterNotReady',
} as const;
export type HealthyReason = (typeof HealthyReason)[keyof typeof HealthyReason];

/** status.lastAttempted.failure.stage values (the spec's failure.stage table). */
export const FailureStage = {
  SourceResolution: 'SourceResolution',
  ClusterResolution: 'ClusterResolution',
  Rendering: 'Rendering',
  Syncing: 'Syncing',
  HookFailed: 'HookFailed',
} as const;
export type FailureStage = (typeof FailureStage)[keyof typeof FailureStage];
