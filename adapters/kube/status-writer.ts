import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import { statusPatchBody, type AnySlice } from '../../domain/status/slices.ts';

export interface ReleaseKey {
  namespace: string;
  name: string;
}

export interface StatusWriter {
  /** Server-side-applies one writer's slice to the Release's /status; returns the new resourceVersion. */
  apply(key: ReleaseKey, write: AnySlice): Promise<{ resourceVersion: string | undefined }>;
}

/** The one module that writes Release status: SSA on /status with the writer's own field manager. */
export function createStatusWriter(kc: KubeConfig): StatusWriter {
  const api = kc.makeApiClient(CustomObjectsApi);
  const applyPatch = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
  return {
    async apply(key, write) {
      const body = {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: 'Release',
        metadata: { name: key.name, namespace: key.namespace },
        status: statusPatchBody(write.manager, write.slice),
      };
      const result = (await api.patchNamespacedCustomObjectStatus(
        {
          group: API_GROUP,
          version: API_VERSION,
          namespace: key.namespace,
          plural: 'releases',
          name: key.name,
          body,
          fieldManager: write.manager,
          force: true,
        },
        applyPatch,
      )) as { metadata?: { resourceVersion?: string } };
      return { resourceVersion: result.metadata?.resourceVersion };
    },
  };
}

export { FieldManager };
