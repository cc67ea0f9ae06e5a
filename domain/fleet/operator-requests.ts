/**
 * What a person's request to a ReleaseSet writes, decided from its status before anything is
 * written (the CLI and the HTTP API share it): the approval of the step that waits
 * (`convoy.dev/approve: <step>@<revision id>`) and a fleet rollback of the current revision
 * (`convoy.dev/rollback: <revision id>`). Each refuses, saying why, when there is nothing to act on.
 */
import type { ReleaseSet } from '../api/release-set.ts';

type Answer<T> = ({ ok: true } & T) | { ok: false; message: string };

const nameOf = (set: Pick<ReleaseSet, 'metadata'>): string =>
  `${set.metadata.namespace ?? 'default'}/${set.metadata.name}`;

/** The annotation value that approves the step waiting now (`step`, when given, must be it). */
export function approvalFor(
  set: Pick<ReleaseSet, 'metadata' | 'status'>,
  step: string | undefined,
): Answer<{ value: string; step: string }> {
  const s = set.status;
  if (s?.rollout?.state !== 'WaitingForApproval' || s.revision === undefined)
    return {
      ok: false,
      message: `nothing of ReleaseSet ${nameOf(set)} waits for approval: its rollout is ${s?.rollout?.state ?? 'not started'}${s?.rollout ? ` at step ${s.rollout.stepName}` : ''}`,
    };
  if (step !== undefined && step !== s.rollout.stepName)
    return {
      ok: false,
      message: `step ${step} of ReleaseSet ${nameOf(set)} does not wait for approval: step ${s.rollout.stepName} does`,
    };
  return { ok: true, value: `${s.rollout.stepName}@${s.revision.id}`, step: s.rollout.stepName };
}

/** The annotation value that rolls the current revision back to status.lastSucceededRevision. */
export function rollbackFor(
  set: Pick<ReleaseSet, 'metadata' | 'status'>,
): Answer<{ value: string; to: string }> {
  const s = set.status;
  if (s?.revision === undefined)
    return {
      ok: false,
      message: `ReleaseSet ${nameOf(set)} has no revision yet (status.revision): nothing to roll back`,
    };
  const last = s.lastSucceededRevision;
  if (last === undefined)
    return {
      ok: false,
      message: `ReleaseSet ${nameOf(set)} cannot roll back: no revision of it has succeeded yet (status.lastSucceededRevision is empty), so there is nothing to go back to; pause it instead`,
    };
  if (last.id === s.revision.id)
    return {
      ok: false,
      message: `ReleaseSet ${nameOf(set)} cannot roll back: its current revision ${s.revision.id} is the last that succeeded, so there is nothing older to go back to`,
    };
  return { ok: true, value: s.revision.id, to: last.id };
}
