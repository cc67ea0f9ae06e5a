/**
 * How bad each state is, for worst-of aggregation and for ordering the
 * summary. Worst first: Degraded > Missing > Progressing > Unknown > Healthy.
 *
 * - Degraded: something failed (or converged too slowly); it calls for a
 *   rollback or a human, so nothing may hide it.
 * - Missing: an object of the render does not exist; the render is not
 *   delivered, and this will not fix itself the way Progressing does.
 * - Progressing: the cluster is converging, within a deadline.
 * - Unknown: the rules could not decide (e.g. Pod phase Unknown after a node
 *   was lost). It is weaker evidence than any positive signal, so a definite
 *   Progressing/Missing/Degraded elsewhere wins, but it is never Healthy.
 *   (Argo CD ranks Unknown worst of all; there it mostly means "the health
 *   check itself errored", which our rules never do — CEL errors are Degraded.)
 * - Healthy.
 */
import type { HealthState } from './types.ts';

export const HEALTH_STATES_WORST_FIRST: readonly HealthState[] = [
  'Degraded',
  'Missing',
  'Progressing',
  'Unknown',
  'Healthy',
];

/** Higher is worse: Healthy 0 … Degraded 4. */
export function healthSeverity(state: HealthState): number {
  return HEALTH_STATES_WORST_FIRST.length - 1 - HEALTH_STATES_WORST_FIRST.indexOf(state);
}
