/**
 * A manual fleet rollback: the annotation `convoy.dev/rollback: <status.revision.id>` on a
 * ReleaseSet asks it to return every Cluster the current revision updated to
 * status.lastSucceededRevision now, as `onFailure: RollbackFleet` does after a failure
 * (docs/fleet.md "Rollback"). Naming the revision makes the request hold once: a later revision
 * (new commit, template change) is not rolled back by a request left on the set.
 */
import type { Revision } from '../api/release-set.ts';
import { FleetAnnotation } from './labels.ts';

export type RollbackRequest =
  | { readonly kind: 'none' }
  /** The request cannot be acted on (another revision, nothing to go back to): a note for the condition message. */
  | { readonly kind: 'ignored'; readonly note: string }
  | { readonly kind: 'requested'; readonly target: Revision };

export function readRollbackRequest(
  value: string | undefined,
  revision: Revision,
  lastSucceeded: Revision | undefined,
): RollbackRequest {
  if (value === undefined || value === '') return { kind: 'none' };
  const asked = `${FleetAnnotation.rollback}=${value.length <= 64 ? value : `${value.slice(0, 63)}…`}`;
  if (value !== revision.id)
    return {
      kind: 'ignored',
      note: `${asked} names another revision than the current ${revision.id}: ignored (a rollback request holds for the revision it names)`,
    };
  if (lastSucceeded === undefined)
    return {
      kind: 'ignored',
      note: `${asked} cannot be done: no revision of this set has succeeded yet (status.lastSucceededRevision is empty), so there is nothing to roll back to; nothing was written for it`,
    };
  if (lastSucceeded.id === revision.id)
    return {
      kind: 'ignored',
      note: `${asked} cannot be done: revision ${revision.id} is itself the last that succeeded, so there is nothing older to roll back to; nothing was written for it`,
    };
  return { kind: 'requested', target: lastSucceeded };
}
