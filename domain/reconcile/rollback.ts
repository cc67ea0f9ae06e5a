import { targetNamespaceOf } from '../api/objects.ts';
import type { Release } from '../api/index.ts';
import { objectKey } from '../render/identity.ts';
import { planWaves } from '../render/order.ts';
import type { KubeObject } from '../render/kube-object.ts';
import { toRfc3339 } from '../status/conditions.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { ReconcilePorts, TargetCluster } from './ports.ts';
import type { RolloutProgress } from './rollout.ts';
import { errorMessage } from './stops.ts';

/**
 * failurePolicy.rollback OnWaveFailure: the rollout of a new render timed out,
 * so the last healthy render (status.lastHealthy) is applied again, wave by
 * wave without waiting, and what only the failed render had is pruned.
 * Returns the Halt that says so (Applied True, RolledBack), or undefined when
 * there is nothing to roll back to.
 */
export async function rollBack(
  release: Release,
  ports: ReconcilePorts,
  target: TargetCluster,
  failed: { renderRef: string; objects: readonly KubeObject[]; progress: RolloutProgress; reason: string },
  now: Date,
): Promise<Halt | undefined> {
  const healthyRef = release.status?.lastHealthy?.renderRef;
  const store = ports.store;
  if (healthyRef === undefined || healthyRef === failed.renderRef || store === undefined) return undefined;
  const healthy = await attempt(
    () => store.get(release, healthyRef),
    (e) =>
      halt(
        'rolloutFailed',
        `${failed.reason}; the rollback to ${healthyRef} could not load it: ${errorMessage(e)}`,
        e,
      ),
  );
  if (isHalt(healthy)) return healthy;
  if (healthy === undefined)
    return halt(
      'rolloutFailed',
      `${failed.reason}; the last healthy render ${healthyRef} is no longer in the render store`,
    );

  for (const wave of planWaves(healthy.objects)) {
    for (const obj of wave.objects) {
      const applied = await attempt(
        () => target.apply(obj),
        (e) =>
          halt(
            'rolloutFailed',
            `${failed.reason}; the rollback to ${healthyRef} failed: ${errorMessage(e)}`,
            e,
          ),
      );
      if (isHalt(applied)) return applied;
    }
  }
  const defaultNs = targetNamespaceOf(release);
  const keep = new Set(healthy.objects.map((o) => objectKey(o, defaultNs)));
  for (const obj of [...failed.objects].reverse()) {
    if (keep.has(objectKey(obj, defaultNs))) continue;
    const pruned = await attempt(
      () => target.prune(obj),
      (e) =>
        halt(
          'rolloutFailed',
          `${failed.reason}; the rollback could not remove ${obj.kind} ${obj.metadata.name}: ${errorMessage(e)}`,
          e,
        ),
    );
    if (isHalt(pruned)) return pruned;
  }
  failed.progress.rollout.state = 'RolledBack';
  failed.progress.rollout.finishedAt = toRfc3339(now);
  return halt('rolledBack', `${failed.reason}; rolled back to the last healthy render ${healthyRef}`);
}
