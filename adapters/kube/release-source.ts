import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import { releasePath } from './convoy-paths.ts';
import { createKubeClient } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';
import { isNotFound } from './management-reader.ts';

/** Where a loop, the client library or a test reads a Release from. */
export interface ReleaseSource {
  /**
   * The Release as stored now, or undefined when it no longer exists. `message`: the run's
   * message, whose Release the Lease guard may have read already (functions/runtime/release-reads.ts).
   */
  get(namespace: string, name: string, message?: QueueMessage): Promise<unknown>;
}

/** Reads Releases from the management cluster: one GET each, a 404 as undefined. */
export function createReleaseSource(config: KubeClientConfig): ReleaseSource {
  const client = createKubeClient(config);
  return {
    async get(namespace, name) {
      try {
        return await client.get<unknown>(releasePath(namespace, name));
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
  };
}
