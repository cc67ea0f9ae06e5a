import type { Release } from '../../domain/api/index.ts';
import { mutationSchema } from '../../domain/api/objects.ts';
import type { MutationInput, ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { selectorMatches } from '../../domain/render/label-selector.ts';
import type { ManagementReader } from '../kube/management-reader.ts';
import type { TtlCache } from './ttl-cache.ts';
import { ALL_NAMESPACES, inNamespace } from './port-caches.ts';

/**
 * The Mutations in the Release's namespace whose releaseSelector matches the Release's labels.
 * With `cache`, a namespace's list is reused for the cache's TTL (port-caches.ts says when it is dropped).
 */
export function createMutationsPort(
  reader: ManagementReader,
  cache?: TtlCache<Record<string, unknown>[]>,
): ReconcilePorts['mutations'] {
  const list = async (ns: string) =>
    cache === undefined
      ? reader.listObjects('mutations', ns)
      : inNamespace(
          await cache.get(ALL_NAMESPACES, 'mutations', () => reader.listAllNamespaces('mutations')),
          ns,
        );
  return {
    async forRelease(release: Release): Promise<MutationInput[]> {
      const ns = release.metadata.namespace ?? 'default';
      const labels = release.metadata.labels ?? {};
      const selected: MutationInput[] = [];
      for (const raw of await list(ns)) {
        const parsed = mutationSchema.safeParse(raw);
        if (!parsed.success) {
          const name = (raw['metadata'] as { name?: string } | undefined)?.name ?? '?';
          throw new Error(
            `Mutation ${ns}/${name} does not parse: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
          );
        }
        const mutation = parsed.data;
        if (!selectorMatches(mutation.spec.releaseSelector, labels)) continue;
        selected.push({
          name: mutation.metadata.name,
          generation: mutation.metadata.generation ?? 0,
          spec: mutation.spec,
        });
      }
      return selected;
    },
  };
}
