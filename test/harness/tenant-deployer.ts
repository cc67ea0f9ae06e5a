// The tenant's own identity in the test harnesses: a ServiceAccount of the test namespace bound to
// cluster-admin, which Releases without serviceAccountName act as (the installation's
// defaultServiceAccount there). The functions still act as their installation's identity (bound like
// convoy:functions) and reach it only by impersonation, as on a real install; tests that prove a
// refusal give a Release a narrower one.
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';

export const TENANT_DEPLOYER = 'convoy-test-deployer';

/** Creates TENANT_DEPLOYER in `namespace` with cluster-admin; returns its removal (the binding is cluster-scoped). */
export async function createTenantDeployer(
  admin: KubeConfig,
  namespace: string,
): Promise<() => Promise<void>> {
  await admin
    .makeApiClient(CoreV1Api)
    .createNamespacedServiceAccount({ namespace, body: { metadata: { name: TENANT_DEPLOYER } } });
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const name = `${TENANT_DEPLOYER}-${namespace}`;
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: TENANT_DEPLOYER, namespace }],
    },
  });
  return async () => {
    await rbac.deleteClusterRoleBinding({ name });
  };
}
