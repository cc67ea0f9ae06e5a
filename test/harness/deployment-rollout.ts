// A Deployment whose rollout the Deployment controller has finished: it observed the current
// generation and every replica is updated and available. After that the controller writes the
// Deployment no more (until someone changes it), so its resourceVersion stays put.
import { AppsV1Api, type KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { until } from './runtime-env.ts';

export function deploymentRolledOut(d: V1Deployment): boolean {
  const replicas = d.spec?.replicas ?? 1;
  const status = d.status ?? {};
  return (
    (status.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) &&
    (status.updatedReplicas ?? 0) === replicas &&
    (status.availableReplicas ?? 0) === replicas &&
    (status.replicas ?? 0) === replicas
  );
}

/** Waits until the Deployment controller has finished rolling out `namespace/name` (read as `kc`). */
export async function untilDeploymentRolledOut(
  kc: KubeConfig,
  namespace: string,
  name: string,
  timeoutMs = 60_000,
): Promise<V1Deployment> {
  const apps = kc.makeApiClient(AppsV1Api);
  return until(
    `Deployment ${namespace}/${name} is rolled out`,
    async () => {
      const d = await apps.readNamespacedDeployment({ namespace, name });
      return deploymentRolledOut(d) ? d : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );
}
