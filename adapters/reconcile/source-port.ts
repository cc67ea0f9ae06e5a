import type { Release } from '../../domain/api/index.ts';
import { gitRepositorySchema } from '../../domain/api/objects.ts';
import type { GitRef } from '../../domain/api/git-ref.ts';
import type { ReconcilePorts, SourceTree } from '../../domain/reconcile/ports.ts';
import { SourceNotReadyError } from '../source/errors.ts';
import { fetchGitSource } from '../source/git.ts';
import type { GitCache } from '../source/git-cache.ts';
import type { RefCache } from '../source/ref-cache.ts';
import { fetchHelmChart } from '../source/helm-repo.ts';
import type { ManagementReader } from '../kube/management-reader.ts';
import { credentialsFrom } from './credentials.ts';
import { PolicyRefusedError, referencedNamespace } from '../../domain/tenancy/policy.ts';
import { hasUnansweredSyncRequest } from '../../domain/reconcile/annotations.ts';
import { DEFAULT_TENANCY, type TenancySettings } from '../../domain/tenancy/settings.ts';

export interface SourcePortDeps {
  reader: ManagementReader;
  gitCache: GitCache;
  helmCacheDir: string;
  /** Shares ls-remote answers between Releases for a few seconds (adapters/source/ref-cache.ts). */
  refCache?: RefCache | undefined;
  /** Whether spec.source.gitRepositoryRef may name another namespace; default no. */
  tenancy?: Pick<TenancySettings, 'crossNamespaceRefs'> | undefined;
}

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
      const { git, gitRepositoryRef, helm } = release.spec.source;
      // A sync request sees the newest commit: it skips the shared ls-remote answers.
      const fresh = hasUnansweredSyncRequest(release);
      if (git !== undefined) {
        return fetchGit(deps, ns, { url: git.url, ref: git.ref, secret: git.secretRef?.name, path: git.path, fresh }, 'spec.source.git');
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
          repoNs,
          { url: repo.url, ref: repo.ref, secret: repo.secretRef?.name, path: gitRepositoryRef.path, fresh },
          `GitRepository ${repoNs}/${gitRepositoryRef.name}`,
        );
      }
      if (helm !== undefined) {
        const auth = await credentialsFrom(deps.reader, ns, helm.secretRef?.name, 'spec.source.helm.secretRef');
        const chart = await fetchHelmChart(
          { repository: helm.repository, chart: helm.chart, version: helm.version, ...(auth ? { auth } : {}) },
          deps.helmCacheDir,
        );
        return { dir: chart.chartDir, resolved: { helm: chart.resolved } };
      }
      throw new SourceNotReadyError('spec.source', 'spec.source names no source');
    },
  };
}

async function fetchGit(
  deps: SourcePortDeps,
  namespace: string,
  spec: { url: string; ref: GitRef; secret: string | undefined; path: string; fresh: boolean },
  field: string,
): Promise<SourceTree> {
  const auth = await credentialsFrom(deps.reader, namespace, spec.secret, `${field}.secretRef`);
  const fetched = await fetchGitSource(
    { url: spec.url, ref: spec.ref, path: spec.path, field, ...(auth ? { auth } : {}) },
    deps.gitCache,
    { refCache: deps.refCache, freshRef: spec.fresh },
  );
  return { dir: fetched.dir, resolved: { git: { url: fetched.resolved.url, ref: refName(spec.ref), commit: fetched.resolved.commit } } };
}

