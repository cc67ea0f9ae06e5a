/**
 * How the combined verdict (verdict.ts) reads the Applied reasons of spec.dependsOn
 * (domain/reconcile/stops.ts, rows "Dependencies: …"):
 *
 * - DependencyNotReady is a wait: convoy applies the render once the dependencies are met.
 * - DependencyNotFound is a wait that convoy retries with backoff (`retrying`): the dependency
 *   may be created yet.
 * - DependencyCycle, DependencyTooDeep, DependencyTimeout and DependencyNotAllowed are failures:
 *   a person must change a spec or a namespace's labels (the last two are retried with backoff,
 *   so they recover by themselves once that is done, but a `convoy wait` should not hang on them).
 */
import { AppliedReason } from './reasons.ts';

/** Applied reasons of dependency stops that mean "not there yet". */
export function isDependencyWait(reason: string): boolean {
  return reason === AppliedReason.DependencyNotReady;
}

/** Applied reasons of dependency stops that are retried with backoff and read as a wait. */
export const DEPENDENCY_RETRIED_REASONS: readonly string[] = [AppliedReason.DependencyNotFound];
