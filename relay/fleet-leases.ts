/**
 * The Leases of the fleet loop: one per ReleaseSet, convoy-fleet-<set uid>, labelled
 * convoy.dev/release-set-uid (adapters/kube/lease.ts), in the installation namespace. The relay
 * removes a set's Lease when it sees the set deleted or recreated, and sweeps those whose set is
 * gone after its first list of ReleaseSets (a set deleted while no relay led), as it does for
 * the Leases of Releases. Both go by label with the verbs the relay's Role already has on
 * Leases: list, and deletecollection (infra/relay-manifests.ts).
 */
import { RELEASE_SET_UID_LABEL } from '../adapters/kube/lease.ts';
import { createKubeClient, resourcePath } from '../adapters/kube/http.ts';
import type { KubeClientConfig } from '../adapters/kube/kubeconfig.ts';

export interface FleetLeasePort {
  /** Deletes every Lease of the set with this uid (none: nothing happens). */
  removeAllOfSet(setUid: string): Promise<void>;
  /** The set uids that have Leases. */
  releaseSetUids(): Promise<string[]>;
}

interface LabelledLease {
  readonly metadata?: { readonly labels?: Readonly<Record<string, string>> };
}

export function createFleetLeasePort(config: KubeClientConfig, namespace: string): FleetLeasePort {
  const client = createKubeClient(config, { userAgent: 'convoy-relay' });
  const path = resourcePath('coordination.k8s.io/v1', 'leases', namespace);
  return {
    async removeAllOfSet(setUid) {
      await client.delete(path, undefined, { labelSelector: `${RELEASE_SET_UID_LABEL}=${setUid}` });
    },
    async releaseSetUids() {
      const list = await client.list<LabelledLease>(path, { labelSelector: RELEASE_SET_UID_LABEL });
      return list.items.flatMap((lease) => {
        const uid = lease.metadata?.labels?.[RELEASE_SET_UID_LABEL];
        return uid === undefined || uid === '' ? [] : [uid];
      });
    },
  };
}
