// What the dashboard's browser test and bench share: the relay's HTTP API served over a real socket
// for a runtime, a ServiceAccount user with namespaced grants, and many Releases at once.
import {
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
  type V1PolicyRule,
} from '@kubernetes/client-node';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { createS3RenderStore } from '../../adapters/store/s3-render-store.ts';
import type { ConvoyRuntime } from '../../dev/runtime.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { createApiApp } from '../../relay/http/app.ts';
import { cachingAuthenticator } from '../../relay/http/auth-cache.ts';
import { createKubeAuthenticator } from '../../relay/http/auth.ts';
import { createReleaseApi } from '../../relay/http/release-api.ts';
import { serveApi, type ServedApi } from '../../relay/http/serve.ts';
import { userClustersOf } from '../../relay/http/user-cluster.ts';

/** The HTTP API (and the dashboard) of `runtime`, as relay/main.ts composes it, on a free loopback port. */
/** `runtime` absent: no render store (history, diff and tree answer 409 NoStore). */
export function serveDashboard(
  kc: KubeConfig,
  runtime?: Pick<ConvoyRuntime, 's3' | 'bucket'> & { relay?: ConvoyRuntime['relay'] },
): Promise<ServedApi> {
  const app = createApiApp({
    auth: cachingAuthenticator(createKubeAuthenticator(fromClientNodeKubeConfig(kc))),
    releases: createReleaseApi(fromClientNodeKubeConfig(kc)),
    ...(runtime !== undefined
      ? { store: createS3RenderStore({ s3: runtime.s3, bucket: runtime.bucket }) }
      : {}),
    metrics: runtime?.relay?.metrics ?? { render: () => '' },
    ready: () => true,
    userClusters: userClustersOf(fromClientNodeKubeConfig(kc)),
  });
  return serveApi(app, { port: 0 });
}

export interface ServiceAccountUser {
  /** system:serviceaccount:<namespace>:<name> */
  readonly user: string;
  readonly token: string;
  /** Deletes the ServiceAccount: its tokens stop being valid. */
  remove(): Promise<void>;
}

/** A ServiceAccount with a Role per grant (and a RoleBinding to it), and a one-hour token. */
export async function serviceAccountUser(
  kc: KubeConfig,
  namespace: string,
  name: string,
  grants: readonly { namespace: string; rules: V1PolicyRule[] }[],
): Promise<ServiceAccountUser> {
  const core = kc.makeApiClient(CoreV1Api);
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  for (const grant of grants) {
    const role = `${name}-dashboard`;
    await rbac.createNamespacedRole({
      namespace: grant.namespace,
      body: { metadata: { name: role }, rules: grant.rules },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: grant.namespace,
      body: {
        metadata: { name: role },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    });
  }
  const requested = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  return {
    user: `system:serviceaccount:${namespace}:${name}`,
    token: requested.status?.token ?? '',
    remove: async () => {
      await core.deleteNamespacedServiceAccount({ namespace, name });
    },
  };
}

/** Creates `count` minimal Releases named r-0000… in `namespace`, `parallel` at a time. */
export async function createManyReleases(
  kc: KubeConfig,
  namespace: string,
  count: number,
  parallel = 20,
): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await api.createNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace,
        plural: 'releases',
        body: {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'Release',
          metadata: { name: `r-${String(i).padStart(4, '0')}` },
          spec: {
            cluster: { name: 'local' },
            source: { git: { url: 'https://git.example.invalid/apps.git', ref: { branch: 'main' } } },
          },
        },
      });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}
