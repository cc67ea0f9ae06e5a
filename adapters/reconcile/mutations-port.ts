import type { Release } from '../../domain/api/index.ts';
import { mutationSchema } from '../../domain/api/objects.ts';
import type { MutationInput, ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { selectorMatches } from '../../domain/render/label-selector.ts';
import type { ManagementReader } from '../kube/management-reader.ts';

/** The Mutations in the Release's namespace whose releaseSelector matches the Release's labels. */
export function createMutationsPort(reader: ManagementReader): ReconcilePorts['mutations'] {
  return {
    async forRelease(release: Release): Promise<MutationInput[]> {
      const ns = release.metadata.namespace ?? 'default';
      const labels = release.metadata.labels ?? {};
      const selected: MutationInput[] = [];
      for (const raw of await reader.listObjects('mutations', ns)) {
        const parsed = mutationSchema.safeParse(raw);
        if (!parsed.success) {
          const name = (raw['metadata'] as { name?: string } | undefined)?.name ?? '?';
          throw new Error(`Mutation ${ns}/${name} does not parse: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
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
