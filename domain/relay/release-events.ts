/**
 * Which Release watch events ask for a reconcile. The functions write only
 * the status subresource, so a rule that counted every update would make
 * each reconcile trigger the next one: only changes a user (or the HTTP
 * API) makes count.
 */
import type { Release } from '../api/index.ts';
import { Annotation } from '../reconcile/annotations.ts';

/** Annotations that request work; none of them changes metadata.generation. */
export const REQUEST_ANNOTATIONS = [
  Annotation.pin,
  Annotation.syncRequestedAt,
  Annotation.forceSyncRequestedAt,
] as const;

/**
 * Why a change of a Release (old → next; undefined = absent) asks for a
 * reconcile, or undefined when it does not (a status-only update).
 */
export function releaseChangeCause(old: Release | undefined, next: Release | undefined): string | undefined {
  if (old === undefined && next === undefined) return undefined;
  if (old === undefined) return 'Release added';
  if (next === undefined) return 'Release deleted';
  const before = old.metadata;
  const after = next.metadata;
  if (before.uid !== undefined && after.uid !== undefined && before.uid !== after.uid)
    return 'Release recreated';
  if (before.generation !== after.generation) {
    return `spec changed (generation ${before.generation ?? '?'} → ${after.generation ?? '?'})`;
  }
  for (const key of REQUEST_ANNOTATIONS) {
    if ((before.annotations?.[key] ?? '') !== (after.annotations?.[key] ?? ''))
      return `annotation ${key} changed`;
  }
  // Labels decide which Mutations select the Release.
  if (!sameStringMap(before.labels, after.labels)) return 'labels changed';
  if ((before.deletionTimestamp ?? '') !== (after.deletionTimestamp ?? '')) return 'deletion requested';
  return undefined;
}

/** True for add and delete, and for updates of generation, request annotations, labels or deletion; never for status-only updates. */
export function releaseChangeCounts(old: Release | undefined, next: Release | undefined): boolean {
  return releaseChangeCause(old, next) !== undefined;
}

function sameStringMap(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const left = a ?? {};
  const right = b ?? {};
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && left[key] === right[key]);
}
