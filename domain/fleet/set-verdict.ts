/**
 * The verdict of a ReleaseSet, for `convoy wait rset/<name>`, the HTTP API and the dashboard: one
 * word and one line from its status, in this order:
 *
 *   - no status for the current generation yet (observedGeneration, each condition's) → wait;
 *   - Generated False: a stop the set retries (SourceNotReady, ClusterNotReady) → wait, any other
 *     (InvalidSpec, TemplateFailed, NameConflict, NoClusters, Unsupported) → failure;
 *   - rollout Succeeded (RolloutSucceeded True) → ready;
 *   - Halted or RolledBack (StepFailed, RolledBack, RollbackRequested) → failure;
 *   - Paused, WaitingForApproval → held: nothing moves until a person acts (as a suspended Release);
 *   - anything else (a batch, a soak, a retried DeployFailed) → wait.
 *
 * The stop table (stops.ts) decides which Generated reasons are retried, so the two never differ.
 */
import type { ReleaseSet } from '../api/release-set.ts';
import { FleetCondition } from './reasons.ts';
import { FleetStops } from './stops.ts';

export type SetVerdictKind = 'ready' | 'wait' | 'failure' | 'held';

export interface SetVerdict {
  readonly kind: SetVerdictKind;
  /** Succeeded, Progressing, Paused, WaitingForApproval, Halted, RolledBack, or the Generated reason. */
  readonly word: string;
  readonly message: string;
}

type SetLike = Pick<ReleaseSet, 'metadata' | 'status'>;

const retried = new Set(
  Object.values(FleetStops)
    .filter((row) => row.condition === FleetCondition.Generated && row.retry)
    .map((row) => row.reason),
);

export function setVerdict(set: SetLike): SetVerdict {
  const generation = set.metadata.generation ?? 0;
  const status = set.status;
  if (status === undefined || (status.observedGeneration ?? -1) < generation)
    return {
      kind: 'wait',
      word: 'Pending',
      message: `the set's status is not yet about generation ${generation} (observedGeneration ${status?.observedGeneration ?? 'none'})`,
    };
  const generated = status.conditions?.find((c) => c.type === FleetCondition.Generated);
  if (
    generated !== undefined &&
    generated.status === 'False' &&
    (generated.observedGeneration ?? generation) >= generation
  ) {
    const kind = retried.has(generated.reason) ? 'wait' : 'failure';
    return {
      kind,
      word: generated.reason,
      message: `Generated False/${generated.reason}: ${generated.message}`,
    };
  }
  const rollout = status.conditions?.find((c) => c.type === FleetCondition.RolloutSucceeded);
  const state = status.rollout?.state;
  const revision = status.revision?.id ?? '?';
  const detail =
    rollout === undefined ? `rollout ${state ?? 'not started'}` : `${rollout.reason}: ${rollout.message}`;
  if (rollout === undefined || (rollout.observedGeneration ?? generation) < generation)
    return {
      kind: 'wait',
      word: state ?? 'Pending',
      message: `the rollout is not yet reported for generation ${generation}`,
    };
  if (rollout.status === 'True' && state === 'Succeeded')
    return { kind: 'ready', word: 'Succeeded', message: `revision ${revision}: ${rollout.message}` };
  if (state === 'Halted' || state === 'RolledBack')
    return { kind: 'failure', word: state, message: `revision ${revision}: ${detail}` };
  if (state === 'Paused' || state === 'WaitingForApproval')
    return { kind: 'held', word: state, message: `revision ${revision}: ${detail}` };
  return { kind: 'wait', word: state ?? 'Pending', message: `revision ${revision}: ${detail}` };
}
