/**
 * The reads behind spec.dependsOn (domain/dependencies/reads.ts), with the functions' identity on
 * the management cluster: a Release or ReleaseSet by name, and a namespace's labels (who may
 * depend on it: domain/dependencies/tenancy.ts). Only what the domain decides from them reaches
 * the dependent's status.
 */
import { parseRelease } from '../../domain/api/objects.ts';
import { parseReleaseSet } from '../../domain/api/release-set.ts';
import type { DependencyReads } from '../../domain/dependencies/reads.ts';
import { releasePath, releaseSetPath } from '../kube/convoy-paths.ts';
import { createKubeClient, resourcePath } from '../kube/http.ts';
import type { KubeClientConfig } from '../kube/kubeconfig.ts';
import { isNotFound, retryThrottled } from '../kube/management-reader.ts';

/** A dependency that exists but does not parse is not one convoy can judge: an error naming it. */
export class DependencyUnreadableError extends Error {
  override name = 'DependencyUnreadableError';
}

export function createDependencyReads(config: KubeClientConfig): DependencyReads {
  const client = createKubeClient(config);
  const read = async (path: string): Promise<Record<string, unknown> | undefined> => {
    try {
      return await retryThrottled(() => client.get(path));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  };
  return {
    async release(namespace, name) {
      const raw = await read(releasePath(namespace, name));
      if (raw === undefined) return undefined;
      const parsed = parseRelease(raw);
      if (!parsed.ok)
        throw new DependencyUnreadableError(`Release ${namespace}/${name} does not parse: ${parsed.error}`);
      return parsed.value;
    },
    async releaseSet(namespace, name) {
      const raw = await read(releaseSetPath(namespace, name));
      if (raw === undefined) return undefined;
      const parsed = parseReleaseSet(raw);
      if (!parsed.ok)
        throw new DependencyUnreadableError(
          `ReleaseSet ${namespace}/${name} does not parse: ${parsed.error}`,
        );
      return parsed.value;
    },
    async namespaceLabels(namespace) {
      const raw = await read(resourcePath('v1', 'namespaces', undefined, namespace));
      if (raw === undefined) return undefined;
      const metadata = raw['metadata'] as { labels?: Record<string, string> } | undefined;
      return { ...(metadata?.labels ?? {}) };
    },
  };
}
