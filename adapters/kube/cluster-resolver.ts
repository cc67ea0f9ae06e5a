/**
 * Finds the target cluster of a Release: its Cluster object, the kubeconfig it names (the
 * management cluster's own for `inCluster: true`, or one stored in a Secret), and a `/version`
 * probe that both proves the cluster answers and fills the resolved identity.
 */
import { parse as parseYaml } from 'yaml';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { clusterSchema, describeZodError, type Release } from '../../domain/api/objects.ts';
import type { ResolvedCluster, TargetCluster } from '../../domain/reconcile/ports.ts';
import { isPlainObject } from '../../domain/render/kube-object.ts';
import {
  createKubeRequest,
  createTargetCluster,
  KubeRequestError,
  type RequestCounter,
} from './target-cluster.ts';
import { createKubeClient, isKubeApiError, resourcePath } from './http.ts';
import { fromStoredKubeconfigYaml, NoCurrentClusterError, type KubeClientConfig } from './kubeconfig.ts';

/** The parts of a Cluster the resolver reads. */
export interface ClusterObject {
  metadata: { name: string; namespace?: string | undefined; uid?: string | undefined };
  spec: {
    inCluster?: boolean | undefined;
    kubeConfig?: { secretRef: { name: string; key?: string | undefined } } | undefined;
  };
}

export interface ManagementReaders {
  /** The Secret's data, base64-decoded; undefined when the Secret does not exist. Never log it. */
  readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** The Cluster, or undefined when it does not exist. */
  readCluster(namespace: string, name: string): Promise<ClusterObject | undefined>;
}

export interface ClusterResolverOptions extends ManagementReaders {
  managementKubeConfig: KubeClientConfig;
  /** How long the `/version` probe may take. Default 5 s. */
  probeTimeoutMs?: number | undefined;
  requestCounter?: RequestCounter | undefined;
}

export interface ClusterResolver {
  resolve(release: Release): Promise<TargetCluster>;
}

/** The target cluster cannot be used now; the message names the Cluster and what to fix. */
export class ClusterResolutionError extends Error {
  override name = 'ClusterResolutionError';
}

const DEFAULT_KUBECONFIG_KEY = 'value';
const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

export function createClusterResolver(opts: ClusterResolverOptions): ClusterResolver {
  return {
    async resolve(release) {
      const namespace = release.metadata.namespace;
      const name = release.spec.cluster.name;
      if (namespace === undefined || namespace === '') {
        throw new ClusterResolutionError(
          `Release ${release.metadata.name} has no namespace, so its Cluster ${name} cannot be found`,
        );
      }
      const where = `Cluster ${namespace}/${name}`;
      const cluster = await opts.readCluster(namespace, name);
      if (cluster === undefined) throw new ClusterResolutionError(`${where} does not exist`);

      const kc = await kubeConfigOf(cluster, namespace, where, opts);
      const server = kc.server;

      const version = await probeVersion(kc, where, server, opts);
      const identity: ResolvedCluster = {
        name,
        ...(cluster.metadata.uid !== undefined ? { uid: cluster.metadata.uid } : {}),
        server,
        ...(version !== undefined ? { kubernetesVersion: version } : {}),
      };
      return createTargetCluster(kc, identity, { requestCounter: opts.requestCounter });
    },
  };
}

async function kubeConfigOf(
  cluster: ClusterObject,
  namespace: string,
  where: string,
  readers: Pick<ManagementReaders, 'readSecret'> & { managementKubeConfig: KubeClientConfig },
): Promise<KubeClientConfig> {
  if (cluster.spec.inCluster === true) return readers.managementKubeConfig;
  const ref = cluster.spec.kubeConfig?.secretRef;
  if (ref === undefined)
    throw new ClusterResolutionError(`${where}: set spec.inCluster: true or spec.kubeConfig.secretRef`);
  const key = ref.key ?? DEFAULT_KUBECONFIG_KEY;
  const secretName = `Secret ${namespace}/${ref.name}`;
  const data = await readers.readSecret(namespace, ref.name);
  if (data === undefined)
    throw new ClusterResolutionError(`${where}: its kubeconfig ${secretName} does not exist`);
  const text = data[key];
  if (text === undefined || text.trim() === '') {
    throw new ClusterResolutionError(
      `${where}: ${secretName} has no key "${key}" holding a kubeconfig (spec.kubeConfig.secretRef.key)`,
    );
  }
  return loadStoredKubeConfig(text, `${where}: the kubeconfig in ${secretName} key "${key}"`);
}

/**
 * Loads a kubeconfig that came from a Secret. Parser messages are not repeated (they quote the
 * text, which holds credentials), and anything that would make convoy run a command or read a
 * local file is refused: a kubeconfig written by a namespace's user must not reach the
 * controller's own credentials or filesystem.
 */
export function loadStoredKubeConfig(text: string, what: string): KubeClientConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch {
    throw new ClusterResolutionError(`${what} is not valid YAML`);
  }
  if (!isPlainObject(raw))
    throw new ClusterResolutionError(
      `${what} is not a kubeconfig (a mapping with clusters, users and contexts)`,
    );
  const refused = refusedKubeConfigField(raw);
  if (refused !== undefined) {
    throw new ClusterResolutionError(
      `${what} uses ${refused}, which convoy does not allow in a stored kubeconfig; embed the data (…-data fields or a token) instead`,
    );
  }
  try {
    return fromStoredKubeconfigYaml(text, what);
  } catch (error) {
    // Not the loader's message: a valid kubeconfig's details stay out of status and logs.
    if (error instanceof NoCurrentClusterError) {
      throw new ClusterResolutionError(`${what} has no current cluster (check current-context)`);
    }
    throw new ClusterResolutionError(`${what} is not a valid kubeconfig`);
  }
}

const REFUSED_USER_FIELDS = [
  'exec',
  'auth-provider',
  'token-file',
  'tokenFile',
  'client-certificate',
  'client-key',
] as const;
const REFUSED_CLUSTER_FIELDS = ['certificate-authority'] as const;

function refusedKubeConfigField(raw: Record<string, unknown>): string | undefined {
  const entries = (list: unknown, field: string): Record<string, unknown>[] =>
    Array.isArray(list)
      ? list.flatMap((item: unknown) =>
          isPlainObject(item) && isPlainObject(item[field]) ? [item[field]] : [],
        )
      : [];
  for (const user of entries(raw.users, 'user')) {
    const found = REFUSED_USER_FIELDS.find((f) => user[f] !== undefined && user[f] !== null);
    if (found !== undefined) return `users[].user.${found}`;
  }
  for (const cluster of entries(raw.clusters, 'cluster')) {
    const found = REFUSED_CLUSTER_FIELDS.find((f) => cluster[f] !== undefined && cluster[f] !== null);
    if (found !== undefined) return `clusters[].cluster.${found}`;
  }
  return undefined;
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

/** readSecret and readCluster over the management cluster. */
export function createManagementReaders(kc: KubeClientConfig): ManagementReaders {
  const client = createKubeClient(kc);
  return {
    async readSecret(namespace, name) {
      const secret = await unlessNotFound(() =>
        client.get<{ data?: Record<string, string> }>(resourcePath('v1', 'secrets', namespace, name)),
      );
      if (secret === undefined) return undefined;
      const decoded: Record<string, string> = {};
      for (const [key, value] of Object.entries(secret.data ?? {}))
        decoded[key] = Buffer.from(value, 'base64').toString('utf8');
      return decoded;
    },
    async readCluster(namespace, name) {
      const raw: unknown = await unlessNotFound(() =>
        client.get(resourcePath(`${API_GROUP}/${API_VERSION}`, 'clusters', namespace, name)),
      );
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

async function unlessNotFound<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (isKubeApiError(error, 404)) return undefined;
    throw error;
  }
}
