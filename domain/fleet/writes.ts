/**
 * What the step function asks the runtime to write. The runtime applies each `apply` and
 * `rollback` object with server-side apply, field manager convoy-releaseset (force: the body holds
 * only the set's fields, so a user's pin, sync annotations or spec.suspend stay the user's),
 * deletes for `delete`, and for `orphan` removes the set's owner reference.
 */
import type { Revision } from '../api/release-set.ts';
import type { ChildObject } from './generate-child.ts';
import { FleetAnnotation } from './labels.ts';
import type { Release } from '../api/objects.ts';

export type ChildWrite =
  | {
      readonly action: 'apply';
      readonly name: string;
      readonly cluster: string;
      readonly why: 'create' | 'update' | 'restore';
      readonly release: ChildObject;
    }
  | {
      readonly action: 'rollback';
      readonly name: string;
      readonly cluster: string;
      /** The revision the child goes back to (status.lastSucceededRevision). */
      readonly toRevision: Revision;
      /**
       * The render the child ran, ready, at toRevision, when the child recorded it; `release` then
       * already carries the pin. Undefined: the runtime finds the child's render of toRevision in
       * the render store and applies withRollbackPin(release, renderRef); without one it leaves
       * the child as it is and reports it.
       */
      readonly renderRef: string | undefined;
      readonly release: ChildObject;
    }
  | { readonly action: 'delete'; readonly name: string; readonly cluster: string }
  | { readonly action: 'orphan'; readonly name: string; readonly cluster: string };

const PIN = 'convoy.dev/pin';

/** The child with the set's rollback pin (convoy.dev/pin plus the marker that the set set it). */
export function withRollbackPin(release: ChildObject, renderRef: string): ChildObject {
  return {
    ...release,
    metadata: {
      ...release.metadata,
      annotations: { ...release.metadata.annotations, [PIN]: renderRef, [FleetAnnotation.setPin]: renderRef },
    },
  };
}

/** Whether the set's rollback pin is on the child already. */
export function hasRollbackPin(release: Release): boolean {
  const pin = release.metadata.annotations?.[PIN];
  return pin !== undefined && pin === release.metadata.annotations?.[FleetAnnotation.setPin];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether every field of `desired` has that value in `actual` (lists compared whole). */
export function isSubset(desired: unknown, actual: unknown): boolean {
  if (isObject(desired)) {
    if (!isObject(actual)) return false;
    return Object.entries(desired).every(([k, v]) => isSubset(v, actual[k]));
  }
  if (Array.isArray(desired)) {
    return (
      Array.isArray(actual) &&
      desired.length === actual.length &&
      desired.every((v, i) => isSubset(v, actual[i]))
    );
  }
  return desired === actual;
}

/** Whether the child as read already holds everything the set would apply. */
export function isApplied(desired: ChildObject, actual: Release): boolean {
  const refs = (actual.metadata as { ownerReferences?: { uid?: string }[] }).ownerReferences ?? [];
  return (
    refs.some((r) => r.uid === desired.metadata.ownerReferences[0]?.uid) &&
    isSubset(desired.metadata.labels, actual.metadata.labels ?? {}) &&
    isSubset(desired.metadata.annotations, actual.metadata.annotations ?? {}) &&
    isSubset(desired.spec, actual.spec)
  );
}
