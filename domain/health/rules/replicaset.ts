/**
 * ReplicaSet (apps, extensions).
 *
 * Source: Argo CD's built-in check, plus kstatus's "extra pods" row.
 * Where Argo CD and kstatus differ:
 * - `ReplicaFailure` True (pods cannot be created: quota, admission, …):
 *   Argo CD says Degraded, kstatus InProgress. We follow Argo CD — the
 *   controller is blocked, not converging — and name the condition's message.
 * - `status.replicas > spec.replicas` (pods pending termination): kstatus
 *   only; we include it as Progressing.
 * - `spec.replicas` absent → 1 (kstatus, the API server default).
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import { condition, degraded, describeCondition, healthy, num, progressing, withDetail } from './fields.ts';

export function replicaSetHealth(live: KubeObject): ObjectHealth {
  const generation = num(live, ['metadata', 'generation'], 0);
  const observedGeneration = num(live, ['status', 'observedGeneration'], 0);
  if (generation > observedGeneration) {
    return progressing(
      `Waiting for rollout to finish: generation ${generation} not observed yet (observedGeneration ${observedGeneration})`,
    );
  }
  const failure = condition(live, 'ReplicaFailure');
  if (failure?.status === 'True') {
    return degraded(withDetail('ReplicaSet cannot create its pods', describeCondition(failure)));
  }
  const replicas = num(live, ['spec', 'replicas'], 1);
  const available = num(live, ['status', 'availableReplicas'], 0);
  const statusReplicas = num(live, ['status', 'replicas'], 0);
  if (available < replicas) {
    return progressing(`Waiting for rollout to finish: ${available} of ${replicas} replicas are available`);
  }
  if (statusReplicas > replicas) {
    return progressing(`Waiting for ${statusReplicas - replicas} pods pending termination`);
  }
  return healthy(`${available} of ${replicas} replicas available`);
}
