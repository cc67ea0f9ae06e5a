/**
 * The drift loop's ladder and its ONE mapping from what it found to the
 * InSync condition and an Outcome (API.md "Reasons of the other conditions"):
 *
 * | InSync  | Reason          | When                                              |
 * |---------|-----------------|---------------------------------------------------|
 * | True    | InSync          | every object of the applied render matches        |
 * | False   | Drifted         | objects differ or are missing; names up to 10     |
 * | Unknown | Pending         | no render applied yet (and: see below)            |
 * | Unknown | ClusterNotReady | the target cluster could not be read              |
 * | Unknown | Pending         | the CRD refused the status computed (convoy's bug) |
 *
 * Decisions the texts leave open:
 * - "The applied render" is status.lastSuccessful.renderRef.
 * - While a newer render is being rolled out (status.rollout Progressing for
 *   a render that is not lastSuccessful, i.e. waiting at a sync wave), the
 *   cluster holds a mix of both renders; comparing it with either would
 *   report drift nobody made. InSync is Unknown/Pending until it is applied.
 * - The render missing from (or unreadable in) the store is Unknown/Pending
 *   with a message saying so: convoy cannot tell, and the reconcile stores
 *   the render again on its next run.
 * - An object the server refuses to dry-run over the live one (an immutable
 *   field changed) counts as drifted: re-applying the render would fail.
 * - Every Outcome is `stop`: the relay's drift timer brings the next check.
 *   In mode Correct a drifted Release is also sent to the reconcile queue.
 */
import type { Release } from '../api/objects.ts';
import { describeObject, type KubeObject } from '../render/kube-object.ts';
import { stop, type Outcome } from '../runtime/outcome.ts';
import { nextCondition, type ConditionInput } from '../status/conditions.ts';
import { ConditionType, InSyncReason } from '../status/reasons.ts';
import type { ObserveSlice } from '../status/slices.ts';
import type { ObjectDrift } from './drift-diff.ts';

/** How many drifted objects the message names; how many paths per object. */
export const MAX_DRIFTED_NAMED = 10;
export const MAX_PATHS_NAMED = 10;

export type DriftPlan =
  | { readonly kind: 'pending'; readonly message: string }
  | { readonly kind: 'check'; readonly renderRef: string };

/** What the drift loop found. */
export type DriftCheck =
  | { readonly kind: 'pending'; readonly message: string }
  | {
      readonly kind: 'checked';
      readonly renderRef: string;
      /** In render order. */
      readonly objects: readonly { readonly object: KubeObject; readonly drift: ObjectDrift }[];
    }
  | { readonly kind: 'clusterNotReady'; readonly message: string }
  | { readonly kind: 'renderUnavailable'; readonly renderRef: string; readonly message: string };

export interface InSyncVerdict {
  readonly condition: ConditionInput;
  readonly outcome: Outcome;
  /** Drifted in mode Correct: send the Release to the reconcile queue. */
  readonly correct: boolean;
  /** Objects that differ or are missing (0 unless checked). */
  readonly drifted: number;
}

/** Which render the drift loop compares with the cluster, or why it does not check now. */
export function planDriftCheck(release: Release): DriftPlan {
  const status = release.status;
  const applied = status?.lastSuccessful?.renderRef;
  if (applied === undefined) {
    return {
      kind: 'pending',
      message: 'no render was applied yet; drift is checked once one is (status.lastSuccessful.renderRef)',
    };
  }
  const rollout = status?.rollout;
  if (rollout !== undefined && rollout.state === 'Progressing' && rollout.renderRef !== applied) {
    const wave = rollout.wave === undefined ? '' : ` (at wave ${rollout.wave})`;
    return {
      kind: 'pending',
      message: `render ${rollout.renderRef} is being rolled out${wave}; drift is checked once it is applied (the applied render is ${applied})`,
    };
  }
  return { kind: 'check', renderRef: applied };
}

const condition = (status: ConditionInput['status'], reason: string, message: string): ConditionInput => ({
  type: ConditionType.InSync,
  status,
  reason,
  message,
});

export function inSyncVerdict(release: Release, check: DriftCheck): InSyncVerdict {
  const unknown = (reason: string, message: string): InSyncVerdict => ({
    condition: condition('Unknown', reason, message),
    outcome: stop(),
    correct: false,
    drifted: 0,
  });
  switch (check.kind) {
    case 'pending':
      return unknown(InSyncReason.Pending, check.message);
    case 'clusterNotReady':
      return unknown(InSyncReason.ClusterNotReady, check.message);
    case 'renderUnavailable':
      return unknown(InSyncReason.Pending, check.message);
    case 'checked': {
      const drifted = check.objects.filter(({ drift }) => drift.state !== 'InSync');
      const total = check.objects.length;
      if (drifted.length === 0) {
        return {
          condition: condition(
            'True',
            InSyncReason.InSync,
            `all ${total} objects of render ${check.renderRef} match the cluster`,
          ),
          outcome: stop(),
          correct: false,
          drifted: 0,
        };
      }
      const named = drifted
        .slice(0, MAX_DRIFTED_NAMED)
        .map(({ object, drift }) => `${describeObject(object)}: ${describeDrift(drift)}`);
      const more =
        drifted.length > MAX_DRIFTED_NAMED ? `; and ${drifted.length - MAX_DRIFTED_NAMED} more` : '';
      return {
        condition: condition(
          'False',
          InSyncReason.Drifted,
          `${drifted.length} of ${total} objects of render ${check.renderRef} differ from the cluster: ${named.join('; ')}${more}`,
        ),
        outcome: stop(),
        correct: release.spec.driftDetection.mode === 'Correct',
        drifted: drifted.length,
      };
    }
  }
}

/**
 * What is written instead of an InSync condition the Release CRD refused (convoy's own fault):
 * Unknown/Pending naming the refusal; the run stops (a retry would compute the same condition)
 * and the next drift check tries again. `correct` is kept: a drifted Release in mode Correct is
 * still corrected.
 */
export function inSyncRefusedVerdict(refused: InSyncVerdict, refusal: string): InSyncVerdict {
  return {
    condition: condition(
      'Unknown',
      InSyncReason.Pending,
      `the drift status convoy computed was refused, so drift is not reported (${refusal}); it is checked again at the next interval or change`,
    ),
    outcome: stop(),
    correct: refused.correct,
    drifted: refused.drifted,
  };
}

/** `/spec/replicas, /metadata/labels/app`, `missing`, or why it cannot be applied. Never a value. */
export function describeDrift(drift: ObjectDrift): string {
  switch (drift.state) {
    case 'InSync':
      return 'in sync';
    case 'Missing':
      return 'missing';
    case 'Unappliable':
      return `cannot be re-applied: ${drift.message}`;
    case 'Drifted': {
      const shown = drift.paths.slice(0, MAX_PATHS_NAMED).map((p) => (p === '' ? '(the whole object)' : p));
      const more =
        drift.paths.length > MAX_PATHS_NAMED
          ? ` and ${drift.paths.length - MAX_PATHS_NAMED} more fields`
          : '';
      return `${shown.join(', ')}${more}`;
    }
  }
}

/** The convoy-observe slice: the InSync condition alone. */
export function observeSlice(release: Release, verdict: InSyncVerdict, now: Date): ObserveSlice {
  return {
    conditions: [
      nextCondition(release.status?.conditions, verdict.condition, {
        generation: release.metadata.generation ?? 0,
        now,
      }),
    ],
  };
}
