import { join } from 'node:path';
import type { Release } from '../../domain/api/index.ts';
import { gitRepositorySchema } from '../../domain/api/objects.ts';
import type { GitRef } from '../../domain/api/git-ref.ts';
import type { ReconcilePorts, SourceTree } from '../../domain/reconcile/ports.ts';
import { SourceNotReadyError, UnsupportedSourceError } from '../source/errors.ts';
import { fetchOciHelmChart } from '../source/oci-helm.ts';
import { fetchOciArtifact } from '../source/oci-artifact.ts';
import { OciArtifactError, parseOciArtifactUrl } from '../../domain/source/oci-artifact.ts';
import { isOciUrl, OciReferenceError, parseOciChartReference } from '../../domain/source/oci.ts';
import { fetchGitSource } from '../source/git.ts';
import type { GitCache } from '../source/git-cache.ts';
import type { RefCache } from '../source/ref-cache.ts';
import { fetchHelmChart } from '../source/helm-repo.ts';
import type { ManagementReader } from '../kube/management-reader.ts';
import type { DataReader, DataReaderFor } from '../kube/identity-reads.ts';
import { credentialsFrom, type GitAuth } from './credentials.ts';
import { PolicyRefusedError, referencedNamespace } from '../../domain/tenancy/policy.ts';
import { inClusterIdentity } from '../../domain/tenancy/identity.ts';
import { ReadRefusedError } from '../../domain/tenancy/read-refusal.ts';
import { hasUnansweredSyncRequest } from '../../domain/reconcile/annotations.ts';
import { DEFAULT_TENANCY, insecureRegistryAllowed, type TenancySettings } from '../../domain/tenancy/settings.ts';
import type { EcrTokenSource } from '../aws/ecr-token.ts';
import { ociRegistryAccess } from './oci-access.ts';

export interface SourcePortDeps {
  /** convoy's own objects (a GitRepository), read with the functions' identity. */
  reader: ManagementReader;
  /** Git and Helm credentials Secrets, read as the Release's identity. */
  readsAs: DataReaderFor;
  gitCache: GitCache;
  helmCacheDir: string;
  /** Shares ls-remote answers between Releases for a few seconds (adapters/source/ref-cache.ts). */
  refCache?: RefCache | undefined;
  /** Whether spec.source.gitRepositoryRef may name another namespace (default no), and who a Release reads as. */
  tenancy?: Pick<TenancySettings, 'crossNamespaceRefs' | 'defaultServiceAccount' | 'insecureRegistries'> | undefined;
  /** Per-request timeout of OCI registry requests; default 30 s (adapters/source/oci-registry.ts). */
  ociTimeoutMs?: number | undefined;
  /** Largest content layer of a spec.source.oci artifact, in bytes; default 64 MiB (adapters/source/oci-artifact.ts). */
  ociMaxArtifactBytes?: number | undefined;
  /** ECR tokens with the functions' own role (`provider: aws`); undefined: no AWS identity, refused. */
  ecr?: EcrTokenSource | undefined;
}

type HelmSource = NonNullable<Release['spec']['source']['helm']>;
type OciSource = NonNullable<Release['spec']['source']['oci']>;

/** How a ref appears in status.lastAttempted.resolvedSource.git.ref. */
export function refName(ref: GitRef): string {
  if (ref.branch !== undefined) return `refs/heads/${ref.branch}`;
  if (ref.tag !== undefined) return `refs/tags/${ref.tag}`;
  if (ref.commit !== undefined) return ref.commit;
  return `semver:${ref.semver ?? ''}`;
}

/** Fetches spec.source: a Git URL, a GitRepository object, or a Helm chart. */
export function createSourcePort(deps: SourcePortDeps): ReconcilePorts['source'] {
  return {
    async resolve(release: Release): Promise<SourceTree> {
      const ns = release.metadata.namespace ?? 'default';
      const { git, gitRepositoryRef, helm, oci } = release.spec.source;
      const secrets = deps.readsAs(inClusterIdentity(release, deps.tenancy ?? DEFAULT_TENANCY));
      // A sync request sees the newest commit: it skips the shared ls-remote answers.
      const fresh = hasUnansweredSyncRequest(release);
      if (git !== undefined) {
        return fetchGit(deps, secrets, ns, { url: git.url, ref: git.ref, secret: git.secretRef?.name, path: git.path, fresh }, 'spec.source.git');
      }
      if (gitRepositoryRef !== undefined) {
        const field = 'spec.source.gitRepositoryRef';
        let repoNs: string;
        try {
          repoNs = referencedNamespace(
            { field, fromNamespace: ns, kind: 'GitRepository', name: gitRepositoryRef.name, namespace: gitRepositoryRef.namespace },
            deps.tenancy ?? DEFAULT_TENANCY,
          );
        } catch (error) {
          // SourceNotReady, naming the policy.
          if (error instanceof PolicyRefusedError) throw new SourceNotReadyError(field, error.message);
          throw error;
        }
        const raw = await deps.reader.getObject('gitrepositories', repoNs, gitRepositoryRef.name);
        if (raw === undefined) {
          throw new SourceNotReadyError('spec.source.gitRepositoryRef.name', `GitRepository ${repoNs}/${gitRepositoryRef.name} does not exist`);
        }
        const repo = gitRepositorySchema.parse(raw).spec;
        // The repository's own secretRef is local to the repository's namespace.
        return fetchGit(
          deps,
          secrets,
          repoNs,
          { url: repo.url, ref: repo.ref, secret: repo.secretRef?.name, path: gitRepositoryRef.path, fresh },
          `GitRepository ${repoNs}/${gitRepositoryRef.name}`,
        );
      }
      if (helm !== undefined && isOciUrl(helm.repository)) return fetchOciHelm(deps, secrets, ns, helm);
      if (oci !== undefined) return fetchOci(deps, secrets, ns, oci);
      if (helm !== undefined) {
        const auth = await credentialsAs(secrets, ns, helm.secretRef?.name, 'spec.source.helm.secretRef');
        const chart = await fetchHelmChart(
          { repository: helm.repository, chart: helm.chart, version: helm.version ?? '', ...(auth ? { auth } : {}) },
          deps.helmCacheDir,
        );
        return { dir: chart.chartDir, root: chart.chartDir, resolved: { helm: chart.resolved } };
      }
      throw new SourceNotReadyError('spec.source', 'spec.source names no source');
    },
  };
}

/** Credentials read as the Release's identity; a refused read is SourceNotReady naming the Secret and the identity. */
async function credentialsAs(secrets: DataReader, namespace: string, secretName: string | undefined, field: string): Promise<GitAuth | undefined> {
  try {
    return await credentialsFrom(secrets, namespace, secretName, field);
  } catch (error) {
    if (error instanceof ReadRefusedError) throw new SourceNotReadyError(field, `${field}: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * spec.source.helm with an oci:// repository: plain HTTP only when the spec says `insecure: true`
 * and the installation allows that registry; credentials read as the Release's identity.
 */
async function fetchOciHelm(deps: SourcePortDeps, secrets: DataReader, namespace: string, helm: HelmSource): Promise<SourceTree> {
  const field = 'spec.source.helm';
  let registry: string;
  try {
    registry = parseOciChartReference(helm.repository, helm.chart, field).registry;
  } catch (error) {
    if (error instanceof OciReferenceError) throw new UnsupportedSourceError(`${field}.repository`, error.message, { cause: error });
    throw error;
  }
  if (helm.insecure === true && !insecureRegistryAllowed(deps.tenancy ?? DEFAULT_TENANCY, registry)) {
    throw new SourceNotReadyError(
      `${field}.insecure`,
      `${field}.insecure: the installation does not allow plain HTTP to registry ${registry}; serve the registry over HTTPS, or ask the installation's operator to list it in CONVOY_INSECURE_REGISTRIES`,
    );
  }
  const access = await ociRegistryAccess({ secrets, namespace, registry, field, spec: helm, ecr: deps.ecr });
  const chart = await fetchOciHelmChart(
    {
      repository: helm.repository,
      chart: helm.chart,
      version: helm.version,
      digest: helm.digest,
      credentials: access.credentials,
      plainHttp: helm.insecure === true,
      caPem: access.caPem,
      cosignKey: access.cosignKey,
      field,
    },
    deps.helmCacheDir,
    deps.ociTimeoutMs !== undefined ? { timeoutMs: deps.ociTimeoutMs } : {},
  );
  return { dir: chart.chartDir, root: chart.chartDir, resolved: { helm: chart.resolved } };
}

/** spec.source.oci: an artifact of manifests or a Kustomize folder; plain HTTP and credentials as for OCI charts. */
async function fetchOci(deps: SourcePortDeps, secrets: DataReader, namespace: string, oci: OciSource): Promise<SourceTree> {
  const field = 'spec.source.oci';
  let registry: string;
  try {
    registry = parseOciArtifactUrl(oci.url, field).registry;
  } catch (error) {
    if (error instanceof OciArtifactError) throw new UnsupportedSourceError(`${field}.url`, error.message, { cause: error });
    throw error;
  }
  if (oci.insecure === true && !insecureRegistryAllowed(deps.tenancy ?? DEFAULT_TENANCY, registry)) {
    throw new SourceNotReadyError(
      `${field}.insecure`,
      `${field}.insecure: the installation does not allow plain HTTP to registry ${registry}; serve the registry over HTTPS, or ask the installation's operator to list it in CONVOY_INSECURE_REGISTRIES`,
    );
  }
  const access = await ociRegistryAccess({ secrets, namespace, registry, field, spec: oci, ecr: deps.ecr });
  const artifact = await fetchOciArtifact(
    {
      url: oci.url,
      ref: oci.ref,
      path: oci.path,
      layerSelector: oci.layerSelector,
      credentials: access.credentials,
      caPem: access.caPem,
      cosignKey: access.cosignKey,
      plainHttp: oci.insecure === true,
      field,
    },
    join(deps.helmCacheDir, '..', 'oci-artifacts'),
    { timeoutMs: deps.ociTimeoutMs, maxArtifactBytes: deps.ociMaxArtifactBytes },
  );
  return { dir: artifact.dir, root: artifact.root, resolved: { oci: artifact.resolved } };
}

async function fetchGit(
  deps: SourcePortDeps,
  secrets: DataReader,
  namespace: string,
  spec: { url: string; ref: GitRef; secret: string | undefined; path: string; fresh: boolean },
  field: string,
): Promise<SourceTree> {
  const auth = await credentialsAs(secrets, namespace, spec.secret, `${field}.secretRef`);
  const fetched = await fetchGitSource(
    { url: spec.url, ref: spec.ref, path: spec.path, field, ...(auth ? { auth } : {}) },
    deps.gitCache,
    { refCache: deps.refCache, freshRef: spec.fresh },
  );
  return { dir: fetched.dir, root: fetched.root, resolved: { git: { url: fetched.resolved.url, ref: refName(spec.ref), commit: fetched.resolved.commit } } };
}

