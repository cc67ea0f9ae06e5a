/**
 * StatefulSet (apps).
 *
 * Source: Argo CD's built-in check (kubectl's `rollout status`), plus
 * kstatus's "pending termination" row.
 * Where Argo CD and kstatus differ:
 * - OnDelete: kstatus reports Current at once; Argo CD (and we) first wait
 *   for `readyReplicas` to reach `spec.replicas`, then report Healthy without
 *   comparing revisions (pods only move to the new revision when deleted).
 * - Generation: Argo CD treats a missing or lower `status.observedGeneration`
 *   as Progressing; kstatus skips the check when the field is absent. We
 *   follow Argo CD: a StatefulSet controller always writes it.
 * - `status.replicas > spec.replicas` (scale-down not finished): kstatus only;
 *   we include it as Progressing.
 * - `spec.replicas` absent → 1 (kstatus, the API server default).
 * - Partitioned rolling update: both agree — Healthy once `updatedReplicas`
 *   reaches `replicas - partition`; the revision check is skipped.
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import { healthy, num, optionalNum, progressing, str } from './fields.ts';

export function statefulSetHealth(live: KubeObject): ObjectHealth {
  const generation = num(live, ['metadata', 'generation'], 0);
  const observedGeneration = num(live, ['status', 'observedGeneration'], 0);
  if (observedGeneration === 0 || generation > observedGeneration) {
    return progressing('Waiting for the StatefulSet spec update to be observed');
  }
  const replicas = num(live, ['spec', 'replicas'], 1);
  const ready = num(live, ['status', 'readyReplicas'], 0);
  const statusReplicas = num(live, ['status', 'replicas'], 0);
  const updated = num(live, ['status', 'updatedReplicas'], 0);
  if (ready < replicas) {
    return progressing(`Waiting for ${replicas - ready} pods to be ready (${ready} of ${replicas} ready)`);
  }
  if (statusReplicas > replicas) {
    return progressing(`Waiting for ${statusReplicas - replicas} pods pending termination`);
  }
  const strategy = str(live, ['spec', 'updateStrategy', 'type']) ?? 'RollingUpdate';
  if (strategy === 'OnDelete') {
    return healthy(
      `OnDelete update strategy: ${ready} pods ready, ${updated} updated (pods update when deleted)`,
    );
  }
  const partition = optionalNum(live, ['spec', 'updateStrategy', 'rollingUpdate', 'partition']);
  if (partition !== undefined) {
    const target = Math.max(0, replicas - partition);
    if (updated < target) {
      return progressing(
        `Waiting for partitioned roll out to finish: ${updated} of ${target} new pods have been updated`,
      );
    }
    return healthy(`Partitioned roll out complete: ${updated} new pods have been updated`);
  }
  const updateRevision = str(live, ['status', 'updateRevision']) ?? '';
  const currentRevision = str(live, ['status', 'currentRevision']) ?? '';
  if (updateRevision !== currentRevision) {
    return progressing(
      `Waiting for rolling update to complete: ${updated} pods at revision ${updateRevision}, current revision ${currentRevision}`,
    );
  }
  return healthy(`Rolling update complete: ${ready} pods ready at revision ${currentRevision}`);
}
