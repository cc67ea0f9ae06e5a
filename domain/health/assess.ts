/**
 * The health of one live object, and of a set of objects.
 *
 * Order of decision for one object:
 * 1. absent → Missing;
 * 2. a Secret → Healthy, unread;
 * 3. `metadata.deletionTimestamp` set → Progressing (Argo CD: "Pending deletion");
 * 4. CEL checks for its apiVersion + kind, when any → their verdict (they
 *    override the built-in rule);
 * 5. the built-in rule for its group + kind, else the generic rule;
 * 6. Progressing for longer than the progress deadline → Degraded.
 */
import { evaluateChecks, type CompiledChecks } from './cel-checks.ts';
import { isSecret, secretHealth } from './rules/secret.ts';
import { builtinRule } from './rules/registry.ts';
import { isRecord, str } from './rules/fields.ts';
import { healthSeverity } from './severity.ts';
import type { HealthState, ObjectHealth } from './types.ts';

export interface AssessOptions {
  /** Compiled `spec.healthAssessment.checks`; absent → built-in rules only. */
  checks?: CompiledChecks;
  now: Date;
  /** Since when the object has been Progressing (the caller keeps this, e.g. from the rollout start). */
  progressingSince?: Date;
  /** `spec.healthAssessment.progressDeadline` in milliseconds; absent → no deadline. */
  progressDeadlineMs?: number;
}

function assessLive(live: object | undefined | null, checks: CompiledChecks | undefined): ObjectHealth {
  if (live === undefined || live === null) {
    return { state: 'Missing', message: 'The object does not exist in the cluster' };
  }
  if (!isRecord(live)) return { state: 'Unknown', message: 'The live object is not a JSON object' };
  const apiVersion = str(live, ['apiVersion']);
  const kind = str(live, ['kind']);
  if (apiVersion === undefined || kind === undefined) {
    return { state: 'Unknown', message: 'The live object has no apiVersion or kind' };
  }
  if (isSecret(apiVersion, kind)) return secretHealth();
  if (str(live, ['metadata', 'deletionTimestamp']) !== undefined) {
    return { state: 'Progressing', message: 'The object is being deleted' };
  }
  const fromChecks = checks === undefined ? undefined : evaluateChecks(checks, live, apiVersion, kind);
  return fromChecks ?? builtinRule(apiVersion, kind)(live);
}

/** "1h2m3s"-style, for deadline messages. */
export function formatDuration(ms: number): string {
  const totalSeconds = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** Health of one object; never throws. `live` undefined (or null) → Missing. */
export function assessObject(live: object | undefined, opts: AssessOptions): ObjectHealth {
  const health = assessLive(live, opts.checks);
  const { progressingSince, progressDeadlineMs, now } = opts;
  if (health.state !== 'Progressing' || progressingSince === undefined || progressDeadlineMs === undefined) {
    return health;
  }
  const elapsed = now.getTime() - progressingSince.getTime();
  if (elapsed <= progressDeadlineMs) return health;
  return {
    state: 'Degraded',
    message: `${health.message} — Progressing for ${formatDuration(elapsed)}, exceeded the progress deadline of ${formatDuration(progressDeadlineMs)}`,
  };
}

/**
 * Worst-of: Degraded > Missing > Progressing > Unknown > Healthy (why: see
 * severity.ts). No states → Healthy: an empty render has nothing to wait for.
 */
export function aggregate(states: Iterable<HealthState>): HealthState {
  let worst: HealthState = 'Healthy';
  for (const state of states) {
    if (healthSeverity(state) > healthSeverity(worst)) worst = state;
  }
  return worst;
}
