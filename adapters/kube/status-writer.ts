import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import { statusPatchBody, type AnySlice } from '../../domain/status/slices.ts';
import { createKubeClient, resourcePath } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';

export interface ReleaseKey {
  namespace: string;
  name: string;
}

export interface StatusWriter {
  /** Server-side-applies one writer's slice to the Release's /status; returns the new resourceVersion. */
  apply(key: ReleaseKey, write: AnySlice): Promise<{ resourceVersion: string | undefined }>;
}

/** The one module that writes Release status: SSA on /status with the writer's own field manager. */
export function createStatusWriter(config: KubeClientConfig): StatusWriter {
  const client = createKubeClient(config);
  return {
    async apply(key, write) {
      const body = {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: 'Release',
        metadata: { name: key.name, namespace: key.namespace },
        status: statusPatchBody(write.manager, write.slice),
      };
      const result = await client.patch<{ metadata?: { resourceVersion?: string } }>(
        resourcePath(`${API_GROUP}/${API_VERSION}`, 'releases', key.namespace, key.name, 'status'),
        body,
        { type: 'apply', fieldManager: write.manager, force: true },
      );
      return { resourceVersion: result.metadata?.resourceVersion };
    },
  };
}

export { FieldManager };
