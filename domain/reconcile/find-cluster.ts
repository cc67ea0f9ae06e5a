import type { Release } from '../api/index.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { ReconcilePorts, TargetCluster } from './ports.ts';
import type { Resolved } from './resolved.ts';
import { errorMessage } from './stops.ts';

/** Step "Find the cluster": the target `Cluster`, or the stop "missing or not reachable" (clusterNotReady, retried). */
export async function findCluster(
  release: Release,
  ports: ReconcilePorts,
  resolved: Resolved,
): Promise<TargetCluster | Halt> {
  const target = await attempt(
    () => ports.cluster.resolve(release),
    (e) => halt('clusterNotReady', errorMessage(e), e),
  );
  if (!isHalt(target)) resolved.cluster = target.identity;
  return target;
}
