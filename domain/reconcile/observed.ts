import type { Reconciled, SyncRun } from './run.ts';

import type { AppliedObservation } from './resolved.ts';

export type { AppliedObservation };

/**
 * The most objects an observation is made for. It travels to drift and health in a queue message
 * (SQS: 256 KiB), and a live object as the API server answers it (metadata, managedFields) takes
 * well over 200 bytes: more objects never fit, and sealing and measuring a hint of 10,000 objects
 * only to drop it cost the large-render run seconds and tens of MB (bench largeRelease). Without
 * it the observers read the render from the store, as after any tick.
 */
export const MAX_OBSERVED_OBJECTS = 1_000;

/** The decision with what the observers check first, when it tells them and the run's answers cover the render. */
export async function withObservation(decision: Reconciled, run: SyncRun): Promise<Reconciled> {
  if (decision.notify.length === 0) return decision;
  const observed = await observedAfterApply(run);
  return observed === undefined ? decision : { ...decision, observed };
}

/** Every object of the render as this run's own answers have it, or undefined when one is missing. */
async function observedAfterApply({
  target,
  objects,
  renderRef,
}: SyncRun): Promise<AppliedObservation | undefined> {
  if (target.answered === undefined || objects.length > MAX_OBSERVED_OBJECTS) return undefined;
  const answered = target.answered.bind(target);
  const live = await Promise.all(objects.map((obj) => answered(obj).catch(() => undefined)));
  if (live.some((l) => l === undefined)) return undefined;
  return { renderRef, objects, live: live as Record<string, unknown>[] };
}
