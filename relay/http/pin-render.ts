// Pinning a Release to a stored render: shared by PUT …/pin and POST …/rollback.
import { Annotation } from '../../domain/reconcile/annotations.ts';
import type { RenderStore } from '../../domain/store/render-store.ts';
import { ApiError } from './api-common.ts';
import type { ReleaseApi } from './release-api.ts';

export function requireStore(store: RenderStore | undefined): RenderStore {
  if (store === undefined) {
    throw new ApiError(
      409,
      'NoStore',
      'no render store is configured for this convoy installation, so renders cannot be listed or pinned',
    );
  }
  return store;
}

/** 404 for a missing Release, 409 without a store, 404 RenderNotFound when the store lacks the render; then sets convoy.dev/pin. */
export async function pinRender(
  releases: ReleaseApi,
  store: RenderStore | undefined,
  key: { namespace: string; name: string },
  renderRef: string,
  /** The caller's bearer token: the annotation is written as the caller (release-api.ts). */
  token: string,
): Promise<void> {
  await releases.get(key.namespace, key.name); // 404 for a missing Release before asking the store
  if (!(await requireStore(store).has(key.namespace, key.name, renderRef))) {
    throw new ApiError(
      404,
      'RenderNotFound',
      `render ${renderRef} of Release ${key.namespace}/${key.name} is not in the render store; GET …/renders lists the stored ones`,
    );
  }
  await releases.writesAs(token).annotate(key.namespace, key.name, Annotation.pin, renderRef);
}
