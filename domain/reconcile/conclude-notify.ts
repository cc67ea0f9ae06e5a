import { observersRideOnReconcile } from '../status/observer-ticks.ts';
import type { ReleaseSlice } from '../status/slices.ts';
import type { ReconcileEnd } from './reconcile-end.ts';

/**
 * Why the run sends the Release to health and drift at once, or undefined when it does not
 * (ReconcileDecision.notify): `slice` is the status the run concluded.
 */
export function notifyCauseOf(end: ReconcileEnd, slice: ReleaseSlice): string | undefined {
  const { release, halt } = end;
  const status = release.status ?? {};
  const lastAttempted = slice.lastAttempted;
  const succeeded = lastAttempted?.phase === 'Succeeded';
  const renderRef = lastAttempted?.renderRef;
  const newRender =
    (succeeded && end.upToDateMessage === undefined && renderRef !== status.lastSuccessful?.renderRef) ||
    (halt?.halt === 'rolledBack' && status.rollout?.state !== 'RolledBack');
  // The current render changed (a new render waits at a wave, for a hook, for /sync, or failed to
  // apply): the observers hear it at once, so Healthy turns Pending (and InSync follows) within
  // seconds rather than at their next interval tick.
  const currentChanged = renderRef !== undefined && renderRef !== status.lastAttempted?.renderRef;
  if (newRender || currentChanged) return `applied ${renderRef ?? ''}`.trim();
  // The same render applied again over objects that differed (drift corrected, a deleted object
  // re-created): InSync (and Healthy) are recomputed right away, as after an apply, instead of
  // staying False until the drift loop's next interval tick.
  const rewritten = end.progress?.written ?? 0;
  if (succeeded && rewritten > 0) return `corrected ${renderRef ?? ''}: ${rewritten} objects applied again`;
  // A new metadata.generation (a resume, any spec edit that leaves the render as it was): the
  // observers' conditions carry the old generation until they run again, and the combined verdict
  // waits for every condition's observedGeneration; told now, they follow within one run each.
  const generation = release.metadata.generation ?? 0;
  if (status.observedGeneration !== generation)
    return `generation ${generation} handled (was ${status.observedGeneration ?? 'none'})`;
  // Settled (the render applied, nothing in progress): this run just checked every object, so the
  // observers' interval checks ride on it (domain/status/observer-ticks.ts).
  if (observersRideOnReconcile(slice))
    return `settled ${renderRef ?? ''}: the observers' interval checks ride on this reconcile`;
  return undefined;
}
