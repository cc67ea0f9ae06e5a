/**
 * The fleet function's reads and writes on the management cluster, with the functions'
 * identity: the ReleaseSet, the Clusters and Releases of its namespace, the child Releases it
 * applies, deletes or orphans, and its status. Thin: what to write is decided in domain/fleet.
 */
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import type { ReleaseSetStatus } from '../../domain/api/release-set.ts';
import type { ChildObject } from '../../domain/fleet/generate-child.ts';
import { RELEASE_SET_FIELD_MANAGER } from '../../domain/fleet/labels.ts';
import { convoyPath, releasePath, releaseSetPath } from './convoy-paths.ts';
import { createKubeClient, isKubeApiError, KubeApiError } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';
import { retryThrottled } from './management-reader.ts';

const CONVOY_API = `${API_GROUP}/${API_VERSION}`;
const JSON_PATCH = 'application/json-patch+json';

export interface FleetKubePort {
  /** The ReleaseSet as stored, or undefined when it does not exist. */
  getSet(namespace: string, name: string): Promise<Record<string, unknown> | undefined>;
  listClusters(namespace: string): Promise<Record<string, unknown>[]>;
  listReleases(namespace: string): Promise<Record<string, unknown>[]>;
  /** Server-side apply of a child (field manager convoy-releaseset, force). */
  applyChild(release: ChildObject): Promise<void>;
  /** Deletes a child; one already gone is not an error. */
  deleteChild(namespace: string, name: string): Promise<void>;
  /** Removes the owner reference whose uid is `ownerUid` (labels stay); a child gone or no longer owned is not an error. */
  orphanChild(namespace: string, name: string, ownerUid: string): Promise<void>;
  /** Server-side apply of the whole status (field manager convoy-releaseset, force). */
  applyStatus(namespace: string, name: string, status: ReleaseSetStatus): Promise<void>;
}

interface Owned {
  metadata?: { ownerReferences?: { uid?: string }[] };
}

export function createFleetKubePort(config: KubeClientConfig): FleetKubePort {
  const client = createKubeClient(config);
  const apply = { type: 'apply', fieldManager: RELEASE_SET_FIELD_MANAGER, force: true } as const;
  return {
    async getSet(namespace, name) {
      try {
        return await retryThrottled(() => client.get(releaseSetPath(namespace, name)));
      } catch (error) {
        if (isKubeApiError(error, 404)) return undefined;
        throw error;
      }
    },
    async listClusters(namespace) {
      return (await retryThrottled(() => client.list(convoyPath('clusters', namespace)))).items;
    },
    async listReleases(namespace) {
      return (await retryThrottled(() => client.list(releasePath(namespace)))).items;
    },
    async applyChild(release) {
      await client.patch(releasePath(release.metadata.namespace, release.metadata.name), release, apply);
    },
    async deleteChild(namespace, name) {
      try {
        await client.delete(releasePath(namespace, name));
      } catch (error) {
        if (!isKubeApiError(error, 404)) throw error;
      }
    },
    async orphanChild(namespace, name, ownerUid) {
      const childPath = releasePath(namespace, name);
      let child: Owned;
      try {
        child = await client.get<Owned>(childPath);
      } catch (error) {
        if (isKubeApiError(error, 404)) return;
        throw error;
      }
      const index = (child.metadata?.ownerReferences ?? []).findIndex((ref) => ref.uid === ownerUid);
      if (index < 0) return;
      // The test makes the removal exact: a reference list changed since the read fails the patch (retried).
      const ops = [
        { op: 'test', path: `/metadata/ownerReferences/${index}/uid`, value: ownerUid },
        { op: 'remove', path: `/metadata/ownerReferences/${index}` },
      ];
      const response = await client.http({
        method: 'PATCH',
        path: childPath,
        body: ops,
        contentType: JSON_PATCH,
      });
      if (response.status < 200 || response.status > 299)
        throw new KubeApiError(`PATCH ${childPath}: HTTP ${response.status}`, response);
    },
    async applyStatus(namespace, name, status) {
      const body = { apiVersion: CONVOY_API, kind: 'ReleaseSet', metadata: { name, namespace }, status };
      await client.patch(releaseSetPath(namespace, name, 'status'), body, apply);
    },
  };
}
