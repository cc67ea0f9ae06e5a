// The functions' identity as the install manifests grant it, on the shared control plane: a
// ServiceAccount bound to the ClusterRole functionsRbac() generates (renamed for this test run),
// with a token from the TokenRequest API — so a test proves what the shipped RBAC allows, never
// what admin can do.
import { readFileSync } from 'node:fs';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { kubeClientConfig, type KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { FUNCTIONS_ROLE_NAME, functionsRbac } from '../../infra/relay-manifests.ts';

/** A Role for `subject` in `namespace` with `rules`, bound to it. */
export async function grant(
  kc: KubeConfig,
  namespace: string,
  name: string,
  subject: { kind: 'User' | 'ServiceAccount'; name: string },
  rules: object[],
): Promise<void> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } as never });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [
        subject.kind === 'User'
          ? { kind: 'User', name: subject.name, apiGroup: 'rbac.authorization.k8s.io' }
          : { kind: 'ServiceAccount', name: subject.name, namespace },
      ],
    },
  });
}

/** The cluster's server and CA as the admin kubeconfig has them. */
function serverAndCa(admin: KubeConfig): { server: string; ca: string | undefined } {
  const cluster = admin.getCurrentCluster();
  if (cluster === null) throw new Error('the admin kubeconfig has no current cluster');
  const ca =
    cluster.caData !== undefined
      ? Buffer.from(cluster.caData, 'base64').toString('utf8')
      : cluster.caFile !== undefined
        ? readFileSync(cluster.caFile, 'utf8')
        : undefined;
  return { server: cluster.server, ca };
}

/** A token of the ServiceAccount `namespace/name` (TokenRequest, one hour) and a config that uses it. */
export async function serviceAccountConfig(
  admin: KubeConfig,
  namespace: string,
  name: string,
): Promise<{ token: string; config: KubeClientConfig }> {
  const answer = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = answer.status?.token;
  if (token === undefined || token === '')
    throw new Error(`no token was issued for ServiceAccount ${namespace}/${name}`);
  return { token, config: kubeClientConfig({ ...serverAndCa(admin), token }) };
}

/**
 * ServiceAccount `convoy-functions` in `namespace` as the subject of everything functionsRbac()
 * generates for an installation in `namespace` with `tenantNamespaces` (cluster-scoped objects
 * get a `-<namespace>` suffix: they are shared by the test run).
 */
export async function asFunctions(
  admin: KubeConfig,
  namespace: string,
  tenantNamespaces: readonly string[],
): Promise<{ config: KubeClientConfig; close: () => Promise<void> }> {
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await admin
    .makeApiClient(CoreV1Api)
    .createNamespacedServiceAccount({ namespace, body: { metadata: { name: FUNCTIONS_ROLE_NAME } } });
  const renamed = (name: unknown) => `${String(name)}-${namespace}`;
  const subjects = [{ kind: 'ServiceAccount', name: FUNCTIONS_ROLE_NAME, namespace }];
  const created: { kind: string; name: string }[] = [];
  for (const manifest of functionsRbac(namespace, {}, { tenantNamespaces })) {
    const object = manifest as unknown as {
      kind: string;
      metadata: { name: string; namespace?: string };
      roleRef?: { kind: string; name: string };
    };
    const roleRef =
      object.roleRef &&
      (object.roleRef.kind === 'ClusterRole'
        ? { ...object.roleRef, name: renamed(object.roleRef.name) }
        : object.roleRef);
    const body = { ...manifest, ...(roleRef ? { roleRef, subjects } : {}) } as never;
    const ns = object.metadata.namespace;
    if (object.kind === 'ClusterRole' || object.kind === 'ClusterRoleBinding') {
      const name = renamed(object.metadata.name);
      const named = { ...(body as object), metadata: { name } } as never;
      await (object.kind === 'ClusterRole'
        ? rbac.createClusterRole({ body: named })
        : rbac.createClusterRoleBinding({ body: named }));
      created.push({ kind: object.kind, name });
    } else if (object.kind === 'Role' && ns !== undefined)
      await rbac.createNamespacedRole({ namespace: ns, body });
    else if (object.kind === 'RoleBinding' && ns !== undefined)
      await rbac.createNamespacedRoleBinding({ namespace: ns, body });
    else throw new Error(`functionsRbac() generated a ${object.kind} this harness does not know`);
  }
  const { config } = await serviceAccountConfig(admin, namespace, FUNCTIONS_ROLE_NAME);
  return {
    config,
    close: async () => {
      for (const { kind, name } of created)
        await (kind === 'ClusterRole'
          ? rbac.deleteClusterRole({ name })
          : rbac.deleteClusterRoleBinding({ name }));
    },
  };
}
