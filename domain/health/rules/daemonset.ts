/**
 * DaemonSet (apps, extensions).
 *
 * Source: Argo CD's built-in check (kubectl's `rollout status`), plus
 * kstatus's "no desiredNumberScheduled yet" row.
 * Where Argo CD and kstatus differ:
 * - OnDelete: Argo CD reports Healthy as soon as the generation is observed,
 *   without looking at availability; kstatus has no OnDelete rule and would
 *   wait for every pod to be updated, which never happens by itself. We skip
 *   the updated count (Argo CD) but still wait for `numberAvailable` to reach
 *   `desiredNumberScheduled`, as Argo CD does for an OnDelete StatefulSet.
 * - A status without `desiredNumberScheduled` is Progressing (kstatus): the
 *   controller has not counted the nodes yet.
 */
import type { KubeObject, ObjectHealth } from '../types.ts';
import { healthy, num, optionalNum, progressing, str } from './fields.ts';

export function daemonSetHealth(live: KubeObject): ObjectHealth {
  const generation = num(live, ['metadata', 'generation'], 0);
  const observedGeneration = num(live, ['status', 'observedGeneration'], 0);
  if (generation > observedGeneration) {
    return progressing(
      `Waiting for rollout to finish: generation ${generation} not observed yet (observedGeneration ${observedGeneration})`,
    );
  }
  const desired = optionalNum(live, ['status', 'desiredNumberScheduled']);
  if (desired === undefined) {
    return progressing('Waiting for the DaemonSet controller to report status.desiredNumberScheduled');
  }
  const updated = num(live, ['status', 'updatedNumberScheduled'], 0);
  const available = num(live, ['status', 'numberAvailable'], 0);
  const onDelete = str(live, ['spec', 'updateStrategy', 'type']) === 'OnDelete';
  if (!onDelete && updated < desired) {
    return progressing(`Waiting for rollout to finish: ${updated} of ${desired} new pods have been updated`);
  }
  if (available < desired) {
    return progressing(`Waiting for rollout to finish: ${available} of ${desired} pods are available`);
  }
  if (onDelete) {
    return healthy(
      `OnDelete update strategy: ${available} of ${desired} pods available, ${updated} updated (pods update when deleted)`,
    );
  }
  return healthy(`${available} of ${desired} pods available`);
}
