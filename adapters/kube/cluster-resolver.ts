/**
 * Finds the target cluster of a Release for the reconcile: its Cluster, kubeconfig and acting
 * identity (target-access.ts, shared with the observers), and a `/version` probe that both
 * proves the cluster answers and fills the resolved identity.
 */
import { createDiscovery, type Discovery } from './discovery.ts';
import { clusterSchema, describeZodError, type Release } from '../../domain/api/objects.ts';
import type { ResolvedCluster, TargetCluster } from '../../domain/reconcile/ports.ts';
import { isPlainObject } from '../../domain/render/kube-object.ts';
import {
  createKubeRequest,
  createTargetCluster,
  KubeRequestError,
  type RequestCounter,
} from './target-cluster.ts';
import { convoyPath } from './convoy-paths.ts';
import { createKubeClient, isKubeApiError } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';
import { createIdentityReads } from './identity-reads.ts';
import { createManagementReader } from './management-reader.ts';
import {
  ClusterResolutionError,
  loadStoredKubeConfig,
  resolveTargetAccess,
  type ClusterObject,
  type ManagementReaders,
  type TargetAccessOptions,
} from './target-access.ts';

export { ClusterResolutionError, loadStoredKubeConfig, type ClusterObject, type ManagementReaders };

export interface ClusterResolverOptions extends TargetAccessOptions {
  /** How long the `/version` probe may take. Default 5 s. */
  probeTimeoutMs?: number | undefined;
  requestCounter?: RequestCounter | undefined;
}

export interface ClusterResolver {
  resolve(release: Release): Promise<TargetCluster>;
}

const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

/** How long a container reuses API discovery of one server and credentials. */
const DISCOVERY_TTL_MS = 30_000;

export function createClusterResolver(opts: ClusterResolverOptions): ClusterResolver {
  // Discovery per server and credentials (not per Cluster object: every namespace's inCluster
  // Cluster is the same server), reused for DISCOVERY_TTL_MS; a kind missing from a cached
  // list is looked up again (discovery.ts), so a CRD applied meanwhile is found.
  // Keyed by the config's connection pool (one per kubeconfig as loaded: the management
  // cluster's is loaded once per container, a Secret's kubeconfig each run), then by server
  // and impersonated user.
  // The /version answer is kept with it: within the window the probe's proof that the server
  // answers is the last run's, and a server that stops answering meanwhile fails the run's
  // first request instead (docs/decisions.md).
  type Known = { discovery: Discovery; version?: Promise<string | undefined> | undefined; expiresAt: number };
  const discoveries = new WeakMap<object, Map<string, Known>>();
  const knownFor = (kc: KubeClientConfig): Known => {
    const byUser = discoveries.get(kc.agent) ?? new Map<string, Known>();
    discoveries.set(kc.agent, byUser);
    const key = `${kc.server} ${kc.impersonate ?? ''}`;
    const now = Date.now();
    const hit = byUser.get(key);
    if (hit !== undefined && hit.expiresAt > now) return hit;
    const known: Known = {
      discovery: createDiscovery(createKubeRequest(kc, { requestCounter: opts.requestCounter })),
      expiresAt: now + DISCOVERY_TTL_MS,
    };
    byUser.set(key, known);
    return known;
  };
  return {
    async resolve(release) {
      const access = await resolveTargetAccess(release, opts);
      const kc = access.kubeConfig;
      const known = knownFor(kc);
      // Runs at the same time share one probe; a failed probe is not kept.
      const probe = (known.version ??= probeVersion(kc, access.where, kc.server, opts));
      probe.catch(() => {
        if (known.version === probe) known.version = undefined;
      });
      const version = await probe;
      const identity: ResolvedCluster = {
        name: access.cluster.metadata.name,
        ...(access.cluster.metadata.uid !== undefined ? { uid: access.cluster.metadata.uid } : {}),
        server: kc.server,
        ...(version !== undefined ? { kubernetesVersion: version } : {}),
      };
      return createTargetCluster(kc, identity, {
        requestCounter: opts.requestCounter,
        actingAs: access.identity,
        discovery: known.discovery,
      });
    },
  };
}

/** GET /version; the gitVersion, or a ClusterResolutionError naming the cluster and server. */
async function probeVersion(
  kc: KubeClientConfig,
  where: string,
  server: string,
  opts: Pick<ClusterResolverOptions, 'probeTimeoutMs' | 'requestCounter'>,
): Promise<string | undefined> {
  const request = createKubeRequest(kc, {
    requestTimeoutMs: opts.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
    requestCounter: opts.requestCounter,
  });
  let response;
  try {
    response = await request({ method: 'GET', path: '/version' });
  } catch (error) {
    const reason = error instanceof KubeRequestError ? error.reason : String(error);
    throw new ClusterResolutionError(`${where} is unreachable at ${server}: ${reason}`, { cause: error });
  }
  if (response.status === 403 && kc.impersonate !== undefined) {
    // Everyone may GET /version: a 403 here is the impersonation itself.
    throw new ClusterResolutionError(
      `${where}: this installation does not let convoy act as ${kc.impersonate} (impersonation Forbidden); ` +
        "ask the platform admin to add the Release's namespace to the installation's tenant namespaces",
    );
  }
  if (response.status === 401 || response.status === 403) {
    throw new ClusterResolutionError(
      `${where}: ${server} refused the kubeconfig's credentials (HTTP ${response.status})`,
    );
  }
  if (response.status < 200 || response.status > 299) {
    throw new ClusterResolutionError(
      `${where}: ${server} answered GET /version with HTTP ${response.status}`,
    );
  }
  const gitVersion = isPlainObject(response.body) ? response.body.gitVersion : undefined;
  return typeof gitVersion === 'string' ? gitVersion : undefined;
}

/**
 * readSecret (as the Release's identity: identity-reads.ts) and readCluster (convoy's own object,
 * with the functions' identity) over the management cluster.
 */
export function createManagementReaders(kc: KubeClientConfig): ManagementReaders {
  const client = createKubeClient(kc);
  const readsAs = createIdentityReads(kc);
  return {
    readSecret: (namespace, name, as) => readsAs(as).secretData(namespace, name),
    async readCluster(namespace, name) {
      const raw: unknown = await unlessNotFound(() => client.get(convoyPath('clusters', namespace, name)));
      if (raw === undefined) return undefined;
      const parsed = clusterSchema.safeParse(raw);
      if (!parsed.success) {
        throw new ClusterResolutionError(
          `Cluster ${namespace}/${name} is invalid: ${describeZodError(parsed.error)}`,
        );
      }
      return parsed.data;
    },
  };
}

/** The per-container cache cachedClusterReader answers from (adapters/reconcile/ttl-cache.ts has one). */
export interface ClusterListCache {
  get(
    namespace: string,
    key: string,
    load: () => Promise<Record<string, unknown>[]>,
  ): Promise<Record<string, unknown>[]>;
}

/** The cache key of the cluster-wide Cluster list (port-caches.ts ALL_NAMESPACES, 'clusters'). */
const CLUSTER_LIST = ['*', 'clusters'] as const;

/**
 * readers whose readCluster answers from ONE cluster-wide LIST of Clusters kept by `cache`
 * (the functions' ClusterRole may list them; the reconcile's ports read the same way), so the
 * Releases of a thousand namespaces share one request per TTL. A Cluster missing from the list
 * (created since) is read by name. Only the Cluster object is shared: a kubeconfig Secret is
 * still read as each Release's identity (readSecret).
 */
export function cachedClusterReader(
  kc: KubeClientConfig,
  cache: ClusterListCache,
  readers: ManagementReaders = createManagementReaders(kc),
): ManagementReaders {
  const reader = createManagementReader(kc);
  const listAll = (): Promise<Record<string, unknown>[]> => reader.listAllNamespaces('clusters');
  return {
    readSecret: (namespace, name, as) => readers.readSecret(namespace, name, as),
    async readCluster(namespace, name) {
      const listed = await cache.get(CLUSTER_LIST[0], CLUSTER_LIST[1], listAll);
      const raw = listed.find((item) => {
        const meta = isPlainObject(item['metadata']) ? item['metadata'] : {};
        return meta['namespace'] === namespace && meta['name'] === name;
      });
      if (raw === undefined) return readers.readCluster(namespace, name);
      const parsed = clusterSchema.safeParse(raw);
      if (!parsed.success) {
        throw new ClusterResolutionError(
          `Cluster ${namespace}/${name} is invalid: ${describeZodError(parsed.error)}`,
        );
      }
      return parsed.data;
    },
  };
}

async function unlessNotFound<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isKubeApiError(error, 404)) return undefined;
    throw error;
  }
}
