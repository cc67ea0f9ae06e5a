import { targetNamespaceOf } from '../api/objects.ts';
import type { Release } from '../api/index.ts';
import { objectKey } from '../render/identity.ts';
import { describeObject, type KubeObject } from '../render/kube-object.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { ReconcilePorts, TargetCluster } from './ports.ts';
import { errorMessage } from './stops.ts';

export interface PruneReport {
  deleted: number;
  skipped: number;
}

/**
 * Deletes what the last applied render had and the new one lacks. The
 * previous render comes from the store (the inventory); the target adapter
 * refuses objects convoy did not apply or marked `convoy.dev/prune: disabled`.
 */
export async function pruneRemoved(
  release: Release,
  ports: ReconcilePorts,
  target: TargetCluster,
  objects: readonly KubeObject[],
  renderRef: string,
): Promise<PruneReport | Halt> {
  const previousRef = release.status?.lastSuccessful?.renderRef;
  const store = ports.store;
  const report: PruneReport = { deleted: 0, skipped: 0 };
  // The same render as last time: it lacks nothing that render had.
  if (
    !release.spec.syncPolicy.prune ||
    previousRef === undefined ||
    previousRef === renderRef ||
    store === undefined
  )
    return report;
  const defaultNs = targetNamespaceOf(release);
  const previous = await attempt(
    () => store.get(release, previousRef),
    (e) =>
      halt(
        'pruneFailed',
        `reading the previous render ${previousRef} to prune failed: ${errorMessage(e)}`,
        e,
      ),
  );
  if (isHalt(previous) || previous === undefined) return isHalt(previous) ? previous : report;
  const keep = new Set(objects.map((o) => objectKey(o, defaultNs)));
  const removed = previous.objects.filter((o) => !keep.has(objectKey(o, defaultNs))).reverse();
  for (const obj of removed) {
    const result = await attempt(
      () => target.prune(obj),
      (e) =>
        halt(
          'pruneFailed',
          `could not delete ${describeObject(obj)}, which the render no longer contains: ${errorMessage(e)}`,
          e,
        ),
    );
    if (isHalt(result)) return result;
    if (result === 'deleted') report.deleted++;
    else if (result === 'skipped') report.skipped++;
  }
  return report;
}
