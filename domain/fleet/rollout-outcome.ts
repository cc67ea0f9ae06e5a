/**
 * What one ReleaseSet reconcile gives the rollout (RolloutInput) and what the rollout answers
 * (RolloutOutcome): the contract between advance-rollout.ts, the ways a rollout ends
 * (rollout-ends.ts) and the status they feed (fleet-status.ts).
 */
import type { FailingCluster, ReleaseSetSpec, ReleaseSetStatus, Revision } from '../api/release-set.ts';
import type { EventIntent } from '../status/release-events.ts';
import type { Member } from './generate-fleet.ts';
import type { StepPlan } from './steps.ts';
import type { FleetStopName } from './stops.ts';
import type { ChildWrite } from './writes.ts';

export type RolloutStatus = NonNullable<ReleaseSetStatus['rollout']>;

export interface RolloutInput {
  readonly revision: Revision;
  readonly steps: readonly StepPlan[];
  readonly members: readonly Member[];
  readonly rollout: ReleaseSetSpec['rollout'];
  readonly previous: ReleaseSetStatus | undefined;
  /** The value of convoy.dev/approve on the set. */
  readonly approval: string | undefined;
  /** The value of convoy.dev/rollback on the set (rollback-request.ts). */
  readonly rollbackRequest?: string | undefined;
  readonly now: Date;
}

export interface RolloutOutcome {
  readonly rollout: RolloutStatus;
  readonly stop: FleetStopName;
  readonly message: string;
  readonly writes: readonly ChildWrite[];
  readonly requeueAfterSeconds?: number;
  /** Set when this revision succeeded (now or before). */
  readonly succeeded: boolean;
  /** When each step finished, by step index. */
  readonly finishedAt: readonly (string | undefined)[];
  /** The full failing list of a failure found now (Halted, RolledBack); undefined: computed from the children. */
  readonly failing?: readonly FailingCluster[];
  /** The failing list of a failure found earlier, kept as it was (the rollback may have made the children well). */
  readonly frozenFailing?: Pick<ReleaseSetStatus, 'failing' | 'failingOmitted'>;
  readonly events: readonly EventIntent[];
}
