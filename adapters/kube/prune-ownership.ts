// Which live objects prune may delete: only what this Release applied, never
// one annotated convoy.dev/prune: disabled.
import { PRUNE_ANNOTATION, releaseMarkOf } from '../../domain/render/annotations.ts';
import { isPlainObject, type KubeObject } from '../../domain/render/kube-object.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';

export function mayPrune(obj: KubeObject, live: Record<string, unknown>): boolean {
  return ownedBySameRelease(obj, live) && !pruneDisabled(live);
}

/**
 * Prune only what this Release applied: the live object carries the same
 * convoy.dev/release mark as the object in the previous render. Objects
 * rendered before the mark existed fall back to convoy's field ownership.
 */
function ownedBySameRelease(obj: KubeObject, live: Record<string, unknown>): boolean {
  const mark = releaseMarkOf(obj);
  if (mark !== undefined) return releaseMarkOf(live) === mark;
  return appliedByConvoy(live);
}

function appliedByConvoy(live: Record<string, unknown>): boolean {
  const metadata = live.metadata;
  if (!isPlainObject(metadata) || !Array.isArray(metadata.managedFields)) return false;
  return (metadata.managedFields as unknown[]).some(
    (entry) => isPlainObject(entry) && entry.manager === FieldManager.apply,
  );
}

function pruneDisabled(live: Record<string, unknown>): boolean {
  const metadata = live.metadata;
  return (
    isPlainObject(metadata) &&
    isPlainObject(metadata.annotations) &&
    metadata.annotations[PRUNE_ANNOTATION] === 'disabled'
  );
}
