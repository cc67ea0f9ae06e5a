/**
 * Loads the render the observers compare with the cluster, through the
 * render store port. What the observers cannot load becomes a message for
 * their condition (Unknown/Pending); a store that cannot be reached is an
 * error for the runtime to retry.
 */
import type { Release } from '../api/objects.ts';
import { kubeObjectProblem, type KubeObject } from '../render/kube-object.ts';
import { RenderStoreReadError, type RenderStore } from '../store/render-store.ts';

export type LoadedRender =
  | { readonly kind: 'loaded'; readonly renderRef: string; readonly objects: readonly KubeObject[] }
  | { readonly kind: 'unavailable'; readonly renderRef: string; readonly message: string };

/**
 * @throws RenderStoreUnavailableError (transient: retry) and InvalidRenderKeyError.
 */
export async function loadRender(
  store: RenderStore | undefined,
  release: Release,
  renderRef: string,
): Promise<LoadedRender> {
  const unavailable = (message: string): LoadedRender => ({ kind: 'unavailable', renderRef, message });
  if (store === undefined) {
    return unavailable(
      `no render store is configured, so render ${renderRef} cannot be loaded; configure CONVOY_RENDER_BUCKET`,
    );
  }
  const namespace = release.metadata.namespace ?? 'default';
  let stored;
  try {
    stored = await store.get(namespace, release.metadata.name, renderRef);
  } catch (error) {
    if (error instanceof RenderStoreReadError) {
      return unavailable(
        `render ${renderRef} is in the render store but cannot be read (${error.message}); the next reconcile of an unchanged source stores it again`,
      );
    }
    throw error;
  }
  if (stored === undefined) {
    return unavailable(
      `render ${renderRef} is not in the render store; the next reconcile of an unchanged source stores it again`,
    );
  }
  const objects: KubeObject[] = [];
  for (const [index, object] of stored.objects.entries()) {
    const problem = kubeObjectProblem(object);
    if (problem !== undefined) {
      return unavailable(`object ${index + 1} of render ${renderRef} in the render store ${problem}`);
    }
    objects.push(object as KubeObject);
  }
  return { kind: 'loaded', renderRef, objects };
}
