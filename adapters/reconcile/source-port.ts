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
import {
  DEFAULT_TENANCY,
  insecureRegistryAllowed,
  type TenancySettings,
} from '../../domain/tenancy/settings.ts';
import type { EcrTokenSource } from '../aws/ecr-token.ts';
import { ociRegistryAccess, type OciAccess, type OciAccessSpec } from './oci-access.ts';
import { STRICT_EGRESS } from '../../domain/egress/policy.ts';
import { createEgress, type Egress } from '../egress/client.ts';

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
  tenancy?:
    | Pick<TenancySettings, 'crossNamespaceRefs' | 'defaultServiceAccount' | 'insecureRegistries' | 'egress'>
    | undefined;
  /** Per-request timeout of OCI registry requests; default 30 s (adapters/source/oci-registry.ts). */
  ociTimeoutMs?: number | undefined;
  /** Largest content layer of a spec.source.oci artifact, in bytes; default 64 MiB (adapters/source/oci-artifact.ts). */
  ociMaxArtifactBytes?: number | undefined;
  /** ECR tokens with the functions' own role (`provider: aws`); undefined: no AWS identity, refused. */
  ecr?: EcrTokenSource | undefined;
  /** The egress client of every Git, Helm and OCI request; default one with `tenancy.egress` (else the strict policy). */
  egress?: Egress | undefined;
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
  // One egress client for the port's life: the installation's policy, connections kept alive.
  const egress = deps.egress ?? createEgress(deps.tenancy?.egress ?? STRICT_EGRESS);
  return {
    async resolve(release: Release): Promise<SourceTree> {
      const ns = release.metadata.namespace ?? 'default';
      const { git, gitRepositoryRef, helm, oci } = release.spec.source;
      const secrets = deps.readsAs(inClusterIdentity(release, deps.tenancy ?? DEFAULT_TENANCY));
      // A sync request sees the newest commit: it skips the shared ls-remote answers.
      const fresh = hasUnansweredSyncRequest(release);
      if (git !== undefined) {
        return fetchGit(
          deps,
          egress,
          secrets,
          ns,
          { url: git.url, ref: git.ref, secret: git.secretRef?.name, path: git.path, fresh },
          'spec.source.git',
        );
      }
      if (gitRepositoryRef !== undefined) {
        const field = 'spec.source.gitRepositoryRef';
        let repoNs: string;
        try {
          repoNs = referencedNamespace(
            {
              field,
              fromNamespace: ns,
              kind: 'GitRepository',
              name: gitRepositoryRef.name,
              namespace: gitRepositoryRef.namespace,
            },
            deps.tenancy ?? DEFAULT_TENANCY,
          );
        } catch (error) {
          // SourceNotReady, naming the policy.
          if (error instanceof PolicyRefusedError) throw new SourceNotReadyError(field, error.message);
          throw error;
        }
        const raw = await deps.reader.getObject('gitrepositories', repoNs, gitRepositoryRef.name);
        if (raw === undefined) {
          throw new SourceNotReadyError(
            'spec.source.gitRepositoryRef.name',
            `GitRepository ${repoNs}/${gitRepositoryRef.name} does not exist`,
          );
        }
        const repo = gitRepositorySchema.parse(raw).spec;
        // The repository's own secretRef is local to the repository's namespace.
        return fetchGit(
          deps,
          egress,
          secrets,
          repoNs,
          { url: repo.url, ref: repo.ref, secret: repo.secretRef?.name, path: gitRepositoryRef.path, fresh },
          `GitRepository ${repoNs}/${gitRepositoryRef.name}`,
        );
      }
      if (helm !== undefined && isOciUrl(helm.repository))
        return fetchOciHelm(deps, egress, secrets, ns, helm);
      if (oci !== undefined) return fetchOci(deps, egress, secrets, ns, oci);
      if (helm !== undefined) {
        const auth = await credentialsAs(secrets, ns, helm.secretRef?.name, 'spec.source.helm.secretRef');
        const chart = await fetchHelmChart(
          {
            repository: helm.repository,
            chart: helm.chart,
            version: helm.version ?? '',
            ...(auth ? { auth } : {}),
          },
          deps.helmCacheDir,
          { egress },
        );
        return { dir: chart.chartDir, root: chart.chartDir, resolved: { helm: chart.resolved } };
      }
      throw new SourceNotReadyError('spec.source', 'spec.source names no source');
    },
  };
}

/** Credentials read as the Release's identity; a refused read is SourceNotReady naming the Secret and the identity. */
async function credentialsAs(
  secrets: DataReader,
  namespace: string,
  secretName: string | undefined,
  field: string,
): Promise<GitAuth | undefined> {
  try {
    return await credentialsFrom(secrets, namespace, secretName, field);
  } catch (error) {
    if (error instanceof ReadRefusedError)
      throw new SourceNotReadyError(field, `${field}: ${error.message}`, { cause: error });
    throw error;
  }
}

/** What both OCI source kinds need to reach their registry: its host, whether plain HTTP, the credentials, CA and key. */
interface OciSetup {
  plainHttp: boolean;
  access: OciAccess;
  options: { egress: Egress; plainHttpAllowed: (host: string) => boolean; timeoutMs?: number | undefined };
}

/**
 * The one setup of an OCI source (spec.source.helm with an oci:// repository, and spec.source.oci):
 * plain HTTP only when the spec says `insecure: true` and the installation allows that registry;
 * credentials, CA and cosign key read as the Release's identity; every request through the egress
 * client, redirects and token realms to plain HTTP only on registries the installation lists.
 */
async function ociSetup(
  deps: SourcePortDeps,
  egress: Egress,
  secrets: DataReader,
  namespace: string,
  source: {
    field: string;
    urlField: string;
    registry: () => string;
    insecure: boolean | undefined;
    spec: OciAccessSpec;
  },
): Promise<OciSetup> {
  const { field, urlField } = source;
  let registry: string;
  try {
    registry = source.registry();
  } catch (error) {
    if (error instanceof OciReferenceError || error instanceof OciArtifactError)
      throw new UnsupportedSourceError(urlField, error.message, { cause: error });
    throw error;
  }
  const tenancy = deps.tenancy ?? DEFAULT_TENANCY;
  if (source.insecure === true && !insecureRegistryAllowed(tenancy, registry)) {
    throw new SourceNotReadyError(
      `${field}.insecure`,
      `${field}.insecure: the installation does not allow plain HTTP to registry ${registry}; serve the registry over HTTPS, or ask the installation's operator to list it in CONVOY_INSECURE_REGISTRIES`,
    );
  }
  const access = await ociRegistryAccess({
    secrets,
    namespace,
    registry,
    field,
    spec: source.spec,
    ecr: deps.ecr,
  });
  return {
    plainHttp: source.insecure === true,
    access,
    options: {
      egress,
      plainHttpAllowed: (host) => insecureRegistryAllowed(tenancy, host),
      timeoutMs: deps.ociTimeoutMs,
    },
  };
}

/** spec.source.helm with an oci:// repository. */
async function fetchOciHelm(
  deps: SourcePortDeps,
  egress: Egress,
  secrets: DataReader,
  namespace: string,
  helm: HelmSource,
): Promise<SourceTree> {
  const field = 'spec.source.helm';
  const setup = await ociSetup(deps, egress, secrets, namespace, {
    field,
    urlField: `${field}.repository`,
    registry: () => parseOciChartReference(helm.repository, helm.chart, field).registry,
    insecure: helm.insecure,
    spec: helm,
  });
  const { credentials, caPem, cosignKey } = setup.access;
  const chart = await fetchOciHelmChart(
    {
      repository: helm.repository,
      chart: helm.chart,
      version: helm.version,
      digest: helm.digest,
      credentials,
      plainHttp: setup.plainHttp,
      caPem,
      cosignKey,
      field,
    },
    deps.helmCacheDir,
    setup.options,
  );
  return { dir: chart.chartDir, root: chart.chartDir, resolved: { helm: chart.resolved } };
}

/** spec.source.oci: an artifact of manifests or a Kustomize folder. */
async function fetchOci(
  deps: SourcePortDeps,
  egress: Egress,
  secrets: DataReader,
  namespace: string,
  oci: OciSource,
): Promise<SourceTree> {
  const field = 'spec.source.oci';
  const setup = await ociSetup(deps, egress, secrets, namespace, {
    field,
    urlField: `${field}.url`,
    registry: () => parseOciArtifactUrl(oci.url, field).registry,
    insecure: oci.insecure,
    spec: oci,
  });
  const { credentials, caPem, cosignKey } = setup.access;
  const artifact = await fetchOciArtifact(
    {
      url: oci.url,
      ref: oci.ref,
      path: oci.path,
      layerSelector: oci.layerSelector,
      credentials,
      caPem,
      cosignKey,
      plainHttp: setup.plainHttp,
      field,
    },
    join(deps.helmCacheDir, '..', 'oci-artifacts'),
    { ...setup.options, maxArtifactBytes: deps.ociMaxArtifactBytes },
  );
  return { dir: artifact.dir, root: artifact.root, resolved: { oci: artifact.resolved } };
}

async function fetchGit(
  deps: SourcePortDeps,
  egress: Egress,
  secrets: DataReader,
  namespace: string,
  spec: { url: string; ref: GitRef; secret: string | undefined; path: string; fresh: boolean },
  field: string,
): Promise<SourceTree> {
  const auth = await credentialsAs(secrets, namespace, spec.secret, `${field}.secretRef`);
  const fetched = await fetchGitSource(
    { url: spec.url, ref: spec.ref, path: spec.path, field, ...(auth ? { auth } : {}) },
    deps.gitCache,
    { refCache: deps.refCache, freshRef: spec.fresh, egress },
  );
  return {
    dir: fetched.dir,
    root: fetched.root,
    resolved: { git: { url: fetched.resolved.url, ref: refName(spec.ref), commit: fetched.resolved.commit } },
  };
}
