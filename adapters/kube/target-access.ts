/**
 * How a Release reaches its target, shared by the reconcile (cluster-resolver.ts) and the drift
 * and health loops (observer-target.ts): its Cluster (policy-checked), the kubeconfig of that
 * Cluster (the management cluster's own for `inCluster: true`, one stored in a Secret, or an
 * EKS token minted in-process), and who every request acts as — decided once here from
 * domain/tenancy and carried by the kubeconfig (`actingAs` → the Impersonate-User header).
 * A Cluster's kubeconfig Secret is read as the Release's identity on the management cluster (a
 * Release reaches only the credentials its ServiceAccount may read), and an EKS Cluster's role
 * is checked against the installation's `eksRoles` before any token is minted.
 */
import { parse as parseYaml } from 'yaml';
import type { Release } from '../../domain/api/objects.ts';
import { isPlainObject } from '../../domain/render/kube-object.ts';
import {
  assertEksRoleAllowed,
  assertInClusterAllowed,
  DEFAULT_TENANCY,
  PolicyRefusedError,
  ReadRefusedError,
  inClusterIdentity,
  impersonatedUser,
  referencedNamespace,
  remoteIdentity,
  type ActingIdentity,
  type TenancySettings,
} from '../../domain/tenancy/index.ts';
import { STRICT_EGRESS } from '../../domain/egress/policy.ts';
import type { Resolver } from '../egress/lookup.ts';
import { guardTargetServer, TargetEgressRefusedError } from './target-egress.ts';
import {
  actingAs,
  fromStoredKubeconfigYaml,
  NoCurrentClusterError,
  type KubeClientConfig,
} from './kubeconfig.ts';

/** The parts of a Cluster the resolvers read. */
export interface ClusterObject {
  metadata: { name: string; namespace?: string | undefined; uid?: string | undefined };
  spec: {
    inCluster?: boolean | undefined;
    kubeConfig?:
      { secretRef: { name: string; namespace?: string | undefined; key?: string | undefined } } | undefined;
    eks?: EksClusterRef | undefined;
  };
}

export interface EksClusterRef {
  name: string;
  region: string;
  roleArn?: string | undefined;
}

export interface ManagementReaders {
  /**
   * The Secret's data read as `as` (the Release's identity on the management cluster),
   * base64-decoded; undefined when the Secret does not exist; ReadRefusedError when `as` may not
   * read it. Never log it.
   */
  readSecret(
    namespace: string,
    name: string,
    as: ActingIdentity,
  ): Promise<Record<string, string> | undefined>;
  /** The Cluster, or undefined when it does not exist. */
  readCluster(namespace: string, name: string): Promise<ClusterObject | undefined>;
}

/** Reaches EKS clusters: endpoint, CA and a minted bearer token (adapters/aws/eks-token.ts). */
export type EksAccess = (eks: EksClusterRef, where: string) => Promise<KubeClientConfig>;

export interface TargetAccessOptions extends ManagementReaders {
  managementKubeConfig: KubeClientConfig;
  /** The installation's tenancy settings; default DEFAULT_TENANCY (as before: no impersonation). */
  tenancy?: TenancySettings | undefined;
  /** undefined: this installation has no AWS credentials, so `eks` Clusters are refused. */
  eks?: EksAccess | undefined;
  /** Name resolution for the egress check of a stored kubeconfig's server; default dns.lookup (tests stub it). */
  egressResolver?: Resolver | undefined;
}

export interface TargetAccess {
  /** The Cluster's namespace/name, for messages. */
  where: string;
  cluster: ClusterObject;
  /** The kubeconfig to use, already acting as `identity`. */
  kubeConfig: KubeClientConfig;
  identity: ActingIdentity;
}

/** The target cluster cannot be used now; the message names the Cluster and what to fix. */
export class ClusterResolutionError extends Error {
  override name = 'ClusterResolutionError';
}

const DEFAULT_KUBECONFIG_KEY = 'value';

/** The Cluster of a Release, its kubeconfig and the identity requests act as. */
export async function resolveTargetAccess(
  release: Release,
  opts: TargetAccessOptions,
): Promise<TargetAccess> {
  const tenancy = opts.tenancy ?? DEFAULT_TENANCY;
  const releaseNamespace = release.metadata.namespace;
  const ref = release.spec.cluster;
  if (releaseNamespace === undefined || releaseNamespace === '') {
    throw new ClusterResolutionError(
      `Release ${release.metadata.name} has no namespace, so its Cluster ${ref.name} cannot be found`,
    );
  }
  const namespace = policy(() =>
    referencedNamespace(
      {
        field: `spec.cluster of Release ${releaseNamespace}/${release.metadata.name}`,
        fromNamespace: releaseNamespace,
        kind: 'Cluster',
        name: ref.name,
        namespace: ref.namespace,
      },
      tenancy,
    ),
  );
  const where = `Cluster ${namespace}/${ref.name}`;
  const cluster = await opts.readCluster(namespace, ref.name);
  if (cluster === undefined) throw new ClusterResolutionError(`${where} does not exist`);

  if (cluster.spec.inCluster === true) {
    policy(() => assertInClusterAllowed(releaseNamespace, `${namespace}/${ref.name}`, tenancy));
    const identity = inClusterIdentity(release, tenancy);
    return {
      where,
      cluster,
      identity,
      kubeConfig: actingAs(opts.managementKubeConfig, impersonatedUser(identity)),
    };
  }
  const identity = remoteIdentity(namespace, ref.name);
  const eks = cluster.spec.eks;
  if (eks !== undefined) {
    if (opts.eks === undefined) {
      throw new ClusterResolutionError(
        `${where}: spec.eks needs AWS credentials, and this installation runs without them; use spec.kubeConfig`,
      );
    }
    // Before any AWS call: no token is minted and no role assumed for a role the namespace may not use.
    policy(() =>
      assertEksRoleAllowed(
        { clusterNamespace: namespace, cluster: ref.name, roleArn: eks.roleArn, releaseNamespace },
        tenancy,
      ),
    );
    return { where, cluster, identity, kubeConfig: await opts.eks(eks, where) };
  }
  const secretRef = cluster.spec.kubeConfig?.secretRef;
  if (secretRef === undefined)
    throw new ClusterResolutionError(
      `${where}: set spec.inCluster: true, spec.kubeConfig.secretRef or spec.eks`,
    );
  const secretNamespace = policy(() =>
    referencedNamespace(
      {
        field: `spec.kubeConfig.secretRef of ${where}`,
        fromNamespace: namespace,
        kind: 'Secret',
        name: secretRef.name,
        namespace: secretRef.namespace,
      },
      tenancy,
    ),
  );
  const key = secretRef.key ?? DEFAULT_KUBECONFIG_KEY;
  const secretName = `Secret ${secretNamespace}/${secretRef.name}`;
  const data = await readAsRelease(
    () => opts.readSecret(secretNamespace, secretRef.name, inClusterIdentity(release, tenancy)),
    where,
  );
  if (data === undefined)
    throw new ClusterResolutionError(`${where}: its kubeconfig ${secretName} does not exist`);
  const text = data[key];
  if (text === undefined || text.trim() === '') {
    throw new ClusterResolutionError(
      `${where}: ${secretName} has no key "${key}" holding a kubeconfig (spec.kubeConfig.secretRef.key)`,
    );
  }
  const stored = loadStoredKubeConfig(text, `${where}: the kubeconfig in ${secretName} key "${key}"`);
  return { where, cluster, identity, kubeConfig: await guardStored(stored, opts, where) };
}

/**
 * A stored kubeconfig's server is a tenant's choice: with the installation's settings (`tenancy`
 * given, as the functions always give it) it is reached only as the egress policy allows —
 * `tenancy.egress`, or public addresses only (target-egress.ts). Without settings (a test's or
 * bench's loop logic, no installation) it is used as is, like the egress client's loopback default.
 */
async function guardStored(
  stored: KubeClientConfig,
  opts: TargetAccessOptions,
  where: string,
): Promise<KubeClientConfig> {
  if (opts.tenancy === undefined) return stored;
  const egress = { policy: opts.tenancy.egress ?? STRICT_EGRESS, resolver: opts.egressResolver };
  try {
    return await guardTargetServer(stored, egress, `${where}: its kubeconfig`);
  } catch (error) {
    if (error instanceof TargetEgressRefusedError)
      throw new ClusterResolutionError(error.message, { cause: error });
    throw error;
  }
}

/** A kubeconfig the Release's identity may not read: ClusterNotReady naming the Secret and the identity. */
async function readAsRelease<T>(read: () => Promise<T>, where: string): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ReadRefusedError)
      throw new ClusterResolutionError(`${where}: its kubeconfig ${error.message}`, { cause: error });
    throw error;
  }
}

/** A policy refusal at this step is a ClusterNotReady (reconcile) or an unreadable cluster (observers). */
function policy<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof PolicyRefusedError)
      throw new ClusterResolutionError(error.message, { cause: error });
    throw error;
  }
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
    if (error instanceof NoCurrentClusterError)
      throw new ClusterResolutionError(`${what} has no current cluster (check current-context)`);
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
  'as',
  'as-groups',
  'as-user-extra',
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
