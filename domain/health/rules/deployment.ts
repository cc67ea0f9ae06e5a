/**
 * Deployment (apps, extensions).
 *
 * Source: Argo CD's built-in check (itself kubectl's `rollout status`).
 * Where Argo CD and kstatus differ:
 * - kstatus also waits for the `Available` condition and for the
 *   `Progressing` reason `NewReplicaSetAvailable`; Argo CD (and we) decide on
 *   the replica counts only, which the conditions merely restate. This also
 *   keeps the rule usable where no controller runs and a test writes /status.
 * - `spec.replicas` absent → 1 (kstatus, and the API server's default);
 *   Argo CD skips the check instead.
 * - Paused: Argo CD reports `Suspended`, a state we do not have; kstatus has
 *   no paused rule. A paused Deployment is a declared state the controller
 *   will not move out of, so waiting for it would only end in the progress
 *   deadline: we report Healthy (message "paused"), once its generation is
 *   observed. Argo CD checks `paused` before the generation; we check the
 *   generation first so an unobserved pause still reads as Progressing.
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import { condition, degraded, field, healthy, num, progressing, withDetail } from './fields.ts';

export function deploymentHealth(live: KubeObject): ObjectHealth {
  const generation = num(live, ['metadata', 'generation'], 0);
  const observedGeneration = num(live, ['status', 'observedGeneration'], 0);
  if (generation > observedGeneration) {
    return progressing(
      `Waiting for rollout to finish: generation ${generation} not observed yet (observedGeneration ${observedGeneration})`,
    );
  }
  if (field(live, ['spec', 'paused']) === true) {
    return healthy('Deployment is paused; its rollout is not awaited while paused');
  }
  const progressingCondition = condition(live, 'Progressing');
  if (progressingCondition?.reason === 'ProgressDeadlineExceeded') {
    return degraded(withDetail('Deployment exceeded its progress deadline', progressingCondition.message));
  }
  const replicas = num(live, ['spec', 'replicas'], 1);
  const statusReplicas = num(live, ['status', 'replicas'], 0);
  const updated = num(live, ['status', 'updatedReplicas'], 0);
  const available = num(live, ['status', 'availableReplicas'], 0);
  if (updated < replicas) {
    return progressing(
      `Waiting for rollout to finish: ${updated} of ${replicas} new replicas have been updated`,
    );
  }
  if (statusReplicas > updated) {
    return progressing(
      `Waiting for rollout to finish: ${statusReplicas - updated} old replicas are pending termination`,
    );
  }
  if (available < updated) {
    return progressing(
      `Waiting for rollout to finish: ${available} of ${updated} updated replicas are available`,
    );
  }
  return healthy(`${available} of ${replicas} replicas available`);
}
