// `convoy dev` (and the integration harness) act as production does: this applies the install
// manifests' identities — the relay's ServiceAccount, the functions' RBAC for FUNCTIONS_GROUP, the
// tenant RoleBindings, the admission policy on the functions' Release writes and the installation's
// settings ConfigMap, all from infra/relay-manifests.ts,
// the generator of deploy/ and the chart — and returns a kubeconfig for each loop:
// - the relay: a TokenRequest token of its ServiceAccount;
// - the functions: a user of FUNCTIONS_GROUP (the embedded cluster mints one: FUNCTIONS_USER), or on
//   another cluster a ServiceAccount `convoy-functions` bound exactly like that group.
// Admin is used only to apply these objects, never by a loop.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
  type V1ResourceAttributes,
} from '@kubernetes/client-node';
import { PLACEHOLDER_QUEUE_URLS, PLACEHOLDER_REGION } from '../infra/install-files.ts';
import {
  RELAY_CONFIG_NAME,
  RELAY_SERVICE_ACCOUNT,
  relayManifests,
  type KubeManifest,
  type TenancyManifestOptions,
} from '../infra/relay-manifests.ts';
import { withSharedConnections } from './kube-connections.ts';

const FIELD_MANAGER = 'convoy-dev';
const IDENTITY_KINDS = new Set([
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ConfigMap',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);
/** Cluster-scoped kinds among them: this installation's by name (clusterScopedSuffix), removed by remove(). */
const CLUSTER_SCOPED_KINDS = new Set([
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);
/** The ServiceAccount the functions use where no user of their group can be minted. */
export const FUNCTIONS_SERVICE_ACCOUNT = 'convoy-functions';
const TOKEN_SECONDS = 7 * 24 * 3600;
const RBAC_VISIBLE_TIMEOUT_MS = 15_000;

export interface ShippedIdentityOptions {
  /** The installation namespace (created when missing). */
  readonly namespace: string;
  readonly tenancy: TenancyManifestOptions;
  readonly watchSecrets: boolean;
  /** Bearer token of a user in FUNCTIONS_GROUP; absent: the ServiceAccount FUNCTIONS_SERVICE_ACCOUNT. */
  readonly functionsToken?: string | undefined;
  /**
   * Appended to the names of cluster-scoped objects and tenant RoleBindings, so installations sharing
   * one apiserver (tests running in parallel) neither overwrite nor delete each other's; their rules
   * are unchanged.
   */
  readonly clusterScopedSuffix?: string;
}

export interface ShippedIdentities {
  readonly relay: KubeConfig;
  readonly functions: KubeConfig;
  /** The installation's settings as applied (the relay ConfigMap's data, read back from the cluster). */
  readonly settings: Readonly<Record<string, string>>;
  /** Deletes the cluster-scoped objects when they carry a suffix (namespaced ones go with their namespace). */
  remove(): Promise<void>;
}

/** The identity objects of the install manifests, with this installation's names. */
export function identityManifests(options: ShippedIdentityOptions): KubeManifest[] {
  const suffix = options.clusterScopedSuffix ?? '';
  const rename = (name: unknown) => `${String(name)}${suffix}`;
  return relayManifests({
    queueUrls: PLACEHOLDER_QUEUE_URLS,
    region: PLACEHOLDER_REGION,
    namespace: options.namespace,
    crds: [],
    tenancy: options.tenancy,
    watchSecrets: options.watchSecrets,
    ...(options.functionsToken === undefined ? { functionsServiceAccount: FUNCTIONS_SERVICE_ACCOUNT } : {}),
  })
    .filter((m) => IDENTITY_KINDS.has(m.kind))
    .map((m) => {
      const copy = structuredClone(m);
      // Cluster-scoped objects, and the RoleBindings in tenant namespaces (another installation or
      // harness may bind the same namespace), are this installation's by name.
      const shared =
        CLUSTER_SCOPED_KINDS.has(m.kind) ||
        (m.kind === 'RoleBinding' && m.metadata['namespace'] !== options.namespace);
      if (shared) copy.metadata['name'] = rename(m.metadata['name']);
      const roleRef = copy['roleRef'] as { kind: string; name: string } | undefined;
      if (roleRef?.kind === 'ClusterRole') roleRef.name = rename(roleRef.name);
      const policyBinding =
        m.kind === 'ValidatingAdmissionPolicyBinding' ? (copy['spec'] as { policyName: string }) : undefined;
      if (policyBinding !== undefined) policyBinding.policyName = rename(policyBinding.policyName);
      return copy;
    });
}

export async function installShippedIdentities(
  admin: KubeConfig,
  options: ShippedIdentityOptions,
): Promise<ShippedIdentities> {
  const manifests = identityManifests(options);
  const core = admin.makeApiClient(CoreV1Api);
  for (const ns of [options.namespace, ...(options.tenancy.tenantNamespaces ?? [])])
    await ensureNamespace(core, ns);
  if (options.functionsToken === undefined) {
    manifests.unshift({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: FUNCTIONS_SERVICE_ACCOUNT, namespace: options.namespace },
    });
  }
  const objects = KubernetesObjectApi.makeApiClient(admin);
  for (const manifest of manifests) {
    await objects.patch(
      structuredClone(manifest),
      undefined,
      undefined,
      FIELD_MANAGER,
      true,
      PatchStrategy.ServerSideApply,
    );
  }
  const relay = tokenKubeConfig(
    admin,
    'convoy-relay',
    await serviceAccountToken(core, options.namespace, RELAY_SERVICE_ACCOUNT),
  );
  const functions = tokenKubeConfig(
    admin,
    'convoy-functions',
    options.functionsToken ?? (await serviceAccountToken(core, options.namespace, FUNCTIONS_SERVICE_ACCOUNT)),
  );
  // RBAC is served from the authorizer's informer cache: wait until each identity has its rights.
  await untilAllowed(relay, {
    group: 'coordination.k8s.io',
    resource: 'leases',
    verb: 'create',
    namespace: options.namespace,
  });
  await untilAllowed(functions, {
    group: 'convoy.dev',
    resource: 'releases',
    subresource: 'status',
    verb: 'patch',
    namespace: options.namespace,
  });
  for (const tenant of options.tenancy.tenantNamespaces ?? []) {
    await untilAllowed(functions, {
      resource: 'serviceaccounts',
      verb: 'impersonate',
      namespace: tenant,
      name: 'default',
    });
  }
  const config = await core.readNamespacedConfigMap({
    namespace: options.namespace,
    name: RELAY_CONFIG_NAME,
  });
  return {
    relay,
    functions,
    settings: config.data ?? {},
    async remove() {
      if (options.clusterScopedSuffix === undefined) return;
      for (const manifest of manifests.filter((m) => CLUSTER_SCOPED_KINDS.has(m.kind))) {
        await objects.delete(manifest as KubernetesObject).catch((error: unknown) => {
          if ((error as { code?: number }).code !== 404) throw error;
        });
      }
    },
  };
}

async function ensureNamespace(core: CoreV1Api, name: string): Promise<void> {
  try {
    await core.createNamespace({ body: { metadata: { name } } });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
}

async function serviceAccountToken(core: CoreV1Api, namespace: string, name: string): Promise<string> {
  const requested = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: TOKEN_SECONDS } },
  });
  const token = requested.status?.token;
  if (token === undefined || token === '')
    throw new Error(`TokenRequest for ServiceAccount ${namespace}/${name} returned no token`);
  return token;
}

/** The admin kubeconfig's cluster (address, CA) with `token` as the only credential. */
export function tokenKubeConfig(admin: KubeConfig, user: string, token: string): KubeConfig {
  const cluster = admin.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig has no current cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: cluster.name, user }],
    currentContext: user,
  });
  return withSharedConnections(kc);
}

async function untilAllowed(kc: KubeConfig, attributes: V1ResourceAttributes): Promise<void> {
  const api = kc.makeApiClient(AuthorizationV1Api);
  const deadline = Date.now() + RBAC_VISIBLE_TIMEOUT_MS;
  for (;;) {
    const review = await api.createSelfSubjectAccessReview({
      body: { spec: { resourceAttributes: attributes } },
    });
    if (review.status?.allowed === true) return;
    if (Date.now() > deadline) {
      throw new Error(
        `${kc.getCurrentUser()?.name ?? 'identity'} still may not ${attributes.verb} ${attributes.resource} in ${attributes.namespace ?? 'the cluster'} ${RBAC_VISIBLE_TIMEOUT_MS / 1000} s after its RBAC was applied`,
      );
    }
    await sleep(100);
  }
}
