/**
 * The observers' interval checks ride on a settled reconcile ("Lean at rest").
 *
 * A reconcile run that ends with the current render applied and settled — lastAttempted
 * Succeeded, Applied True/Applied, the render it attempted is the one applied, no rollout in
 * progress — has just checked every object of the render against the cluster (a dry run per
 * object, or the apply's own answer). It sends the Release to drift and health
 * (domain/reconcile/conclude.ts), with those answers sealed into the message when they fit
 * (functions/runtime/applied-hint.ts), so the observers' checks need no reads of their own; and
 * the relay, seeing that status write, counts it as a send of both observer loops
 * (domain/relay/timers.ts, observersNotified), so their own timers tick an interval after it.
 *
 * The reconcile and the relay decide by this one predicate, on the status the reconcile writes:
 * whenever the relay counts a ride, the reconcile sent the messages.
 */
import { AppliedReason, ConditionType } from './reasons.ts';

/** The parts of a Release status the predicate reads (the CRD's shape, or the slice the reconcile writes). */
export interface SettledStatus {
  lastAttempted?: { phase?: string | undefined; renderRef?: string | undefined } | undefined;
  lastSuccessful?: { renderRef?: string | undefined } | undefined;
  rollout?: { state?: string | undefined } | undefined;
  conditions?:
    readonly { type: string; status?: string | undefined; reason?: string | undefined }[] | undefined;
}

/** Whether a reconcile that wrote this status sends the Release to drift and health as their interval check. */
export function observersRideOnReconcile(status: SettledStatus | undefined): boolean {
  if (status === undefined) return false;
  const attempted = status.lastAttempted;
  if (
    attempted?.phase !== 'Succeeded' ||
    attempted.renderRef === undefined ||
    attempted.renderRef !== status.lastSuccessful?.renderRef
  )
    return false;
  if (status.rollout?.state === 'Progressing') return false;
  const applied = (status.conditions ?? []).find((c) => c.type === ConditionType.Applied);
  return applied?.status === 'True' && applied.reason === AppliedReason.Applied;
}
