/**
 * Whether a Release's status already reflects everything a reconcile would be
 * asked to handle. A relay that starts leading lists every Release; it sends
 * only those that are not up to date (the timers, derived from status, bring
 * the rest on schedule), so a leadership change does not add a full pass.
 */
import type { Release } from '../api/index.ts';
import { Annotation, annotationOf, isNewRequest } from '../reconcile/annotations.ts';

export function reconcileUpToDate(release: Release): boolean {
  const status = release.status;
  if (status === undefined || release.spec.suspend) return status !== undefined;
  if (
    status.observedGeneration === undefined ||
    status.observedGeneration !== (release.metadata.generation ?? 0)
  )
    return false;
  const applied = status.conditions?.find((c) => c.type === 'Applied');
  // Anything but a settled success (a wait, a failure being retried) may have lost its queue message.
  if (applied === undefined || applied.status !== 'True') return false;
  if (status.rollout?.state === 'Progressing') return false;
  if (status.lastAttempted?.renderRef !== status.lastSuccessful?.renderRef) return false;
  if (isNewRequest(annotationOf(release, Annotation.forceSyncRequestedAt), status.lastHandledForceSyncAt))
    return false;
  if (
    release.spec.syncPolicy.mode === 'Manual' &&
    isNewRequest(annotationOf(release, Annotation.syncRequestedAt), status.lastHandledSyncAt)
  ) {
    return false;
  }
  const pin = annotationOf(release, Annotation.pin);
  if ((pin ?? '') !== (status.pin?.renderRef ?? '')) return false;
  return true;
}
