import type { Release } from '../../domain/api/index.ts';
import type { RenderStorePort, RetentionPolicy, StoredRender } from '../../domain/reconcile/ports.ts';
import type { KubeObject } from '../../domain/render/kube-object.ts';
import type { RenderStore } from '../../domain/store/render-store.ts';
import { toRfc3339 } from '../../domain/status/conditions.ts';
import { applyRetention } from '../store/apply-retention.ts';

const keyOf = (release: Release) => ({
  namespace: release.metadata.namespace ?? 'default',
  name: release.metadata.name,
});

/** The render store as the reconcile loop uses it. */
export function createStorePort(store: RenderStore, now: () => Date): RenderStorePort {
  return {
    async put(release, render: StoredRender) {
      const { namespace, name } = keyOf(release);
      await store.put(
        {
          renderRef: render.renderRef,
          namespace,
          release: name,
          createdAt: toRfc3339(now()),
          objectCount: render.objects.length,
          ...(render.resolvedSource ? { resolvedSource: render.resolvedSource } : {}),
          ...(render.resolvedCluster ? { resolvedCluster: render.resolvedCluster } : {}),
          ...(render.resolvedMutations ? { resolvedMutations: render.resolvedMutations } : {}),
        },
        render.objects,
      );
    },
    async get(release, renderRef) {
      const { namespace, name } = keyOf(release);
      const stored = await store.get(namespace, name, renderRef);
      if (stored === undefined) return undefined;
      return {
        renderRef,
        objects: stored.objects as KubeObject[],
        resolvedSource: stored.meta.resolvedSource as StoredRender['resolvedSource'],
        resolvedCluster: stored.meta.resolvedCluster as StoredRender['resolvedCluster'],
        resolvedMutations: stored.meta.resolvedMutations,
      };
    },
    async prune(release, protectedRefs, policy: RetentionPolicy) {
      const { namespace, name } = keyOf(release);
      await applyRetention(store, namespace, name, policy, protectedRefs, now());
    },
  };
}
