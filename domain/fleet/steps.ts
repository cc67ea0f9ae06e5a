/**
 * Step membership and each step's knobs. A Cluster belongs to the first step whose selector
 * matches it; Clusters no step selects form an implicit last step (REMAINING_STEP). Without
 * spec.rollout.steps every Cluster is in that one step.
 */
import type { RolloutSpec } from '../api/release-set.ts';
import { parseDuration } from '../runtime/duration.ts';
import type { ClusterFacts } from './select-clusters.ts';
import { matchesSelector, selectorIssue } from './selector.ts';

/** The name of the implicit last step; not a DNS label, so no declared step can take it. */
export const REMAINING_STEP = '(remaining)';

export interface StepPlan {
  readonly name: string;
  readonly clusters: readonly ClusterFacts[];
  readonly maxConcurrent: number;
  readonly maxFailures: number;
  readonly minHealthyMs: number;
  readonly timeoutMs: number;
  readonly onFailure: 'Halt' | 'RollbackFleet';
  readonly approvalRequired: boolean;
}

export type Plan =
  | { readonly ok: true; readonly steps: readonly StepPlan[] }
  | { readonly ok: false; readonly field: string; readonly message: string };

/** A count, or a percentage of `total` (rounded up for a concurrency, down for a budget). */
export function resolveCount(value: number | string, total: number, round: 'up' | 'down'): number {
  if (typeof value === 'number') return value;
  const percent = Number.parseInt(value, 10);
  const exact = (total * percent) / 100;
  return round === 'up' ? Math.ceil(exact) : Math.floor(exact);
}

function durationMs(
  value: string,
  field: string,
): { ok: true; ms: number } | { ok: false; field: string; message: string } {
  const parsed = parseDuration(value);
  return parsed.ok
    ? { ok: true, ms: parsed.ms }
    : { ok: false, field, message: `${JSON.stringify(value)} is not a duration such as 30s, 5m or 1h30m` };
}

export function planSteps(rollout: RolloutSpec, clusters: readonly ClusterFacts[]): Plan {
  const declared = rollout.steps ?? [];
  const members: ClusterFacts[][] = declared.map(() => []);
  const remaining: ClusterFacts[] = [];
  for (const [i, step] of declared.entries()) {
    const issue = selectorIssue(step.clusters, `spec.rollout.steps[${i}].clusters`);
    if (issue !== undefined) return { ok: false, field: issue.field, message: issue.message };
  }
  for (const cluster of clusters) {
    const index = declared.findIndex((step) => matchesSelector(step.clusters, cluster.labels));
    if (index >= 0) members[index].push(cluster);
    else remaining.push(cluster);
  }
  const steps: StepPlan[] = [];
  const knobs = [
    ...declared.map((step, i) => ({ step, i, clusters: members[i] })),
    ...(remaining.length > 0 ? [{ step: undefined, i: declared.length, clusters: remaining }] : []),
  ];
  for (const { step, i, clusters: stepClusters } of knobs) {
    const at = step === undefined ? 'spec.rollout' : `spec.rollout.steps[${i}]`;
    if (step !== undefined && stepClusters.length === 0)
      return {
        ok: false,
        field: `${at}.clusters`,
        message: `step ${step.name} selects no Cluster of the set (a Cluster belongs to the first step that selects it); change its selector or remove the step`,
      };
    const minHealthy = durationMs(
      step?.minHealthyTime ?? rollout.minHealthyTime,
      `${step?.minHealthyTime === undefined ? 'spec.rollout' : at}.minHealthyTime`,
    );
    if (!minHealthy.ok) return minHealthy;
    const timeout = durationMs(
      step?.stepTimeout ?? rollout.stepTimeout,
      `${step?.stepTimeout === undefined ? 'spec.rollout' : at}.stepTimeout`,
    );
    if (!timeout.ok) return timeout;
    const concurrent = resolveCount(step?.maxConcurrent ?? rollout.maxConcurrent, stepClusters.length, 'up');
    if (concurrent < 1)
      return {
        ok: false,
        field: `${step?.maxConcurrent === undefined ? 'spec.rollout' : at}.maxConcurrent`,
        message: 'must be at least 1',
      };
    steps.push({
      name: step?.name ?? REMAINING_STEP,
      clusters: stepClusters,
      maxConcurrent: concurrent,
      maxFailures: resolveCount(step?.maxFailures ?? rollout.maxFailures, stepClusters.length, 'down'),
      minHealthyMs: minHealthy.ms,
      timeoutMs: timeout.ms,
      onFailure: step?.onFailure ?? rollout.onFailure,
      approvalRequired: step?.approval === 'Required',
    });
  }
  return { ok: true, steps };
}
