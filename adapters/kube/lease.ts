import { leaseName, type AcquireResult, type FollowUp, type HeldLease, type LeasePort } from '../../domain/runtime/lease.ts';
import { createKubeClient, isKubeApiError, resourcePath } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';

const FOLLOW_UP_ID = 'convoy.dev/follow-up-message-id';
const FOLLOW_UP_DUE = 'convoy.dev/follow-up-due-at';
const RELEASE_UID_LABEL = 'convoy.dev/release-uid';

const isConflict = (e: unknown) => isKubeApiError(e, 409) || isKubeApiError(e, 422);
const isNotFound = (e: unknown) => isKubeApiError(e, 404);

/** A coordination.k8s.io/v1 Lease as JSON (MicroTime fields are strings). */
interface V1Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [field: string]: unknown;
  };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    [field: string]: unknown;
  };
}

/** A MicroTime as the API server writes it: `2026-11-29T15:21:13.067000Z` (six fraction digits). */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Leases in the installation namespace, taken with resourceVersion
 * preconditions: of two runs that race, exactly one update succeeds.
 */
export function createLeasePort(config: KubeClientConfig, namespace: string, now: () => Date = () => new Date()): LeasePort {
  const client = createKubeClient(config);
  const LEASES = 'coordination.k8s.io/v1';
  const pathOf = (name?: string) => resourcePath(LEASES, 'leases', namespace, name);
  const heldBy = new WeakMap<HeldLease, V1Lease>();

  const followUpOf = (lease: V1Lease): FollowUp | undefined => {
    const id = lease.metadata?.annotations?.[FOLLOW_UP_ID];
    if (!id) return undefined;
    const dueAt = lease.metadata?.annotations?.[FOLLOW_UP_DUE];
    return dueAt ? { messageId: id, dueAt } : { messageId: id };
  };
  const expired = (lease: V1Lease) => {
    const holder = lease.spec?.holderIdentity;
    if (!holder) return true;
    const renewed = lease.spec?.renewTime ?? lease.spec?.acquireTime;
    const duration = lease.spec?.leaseDurationSeconds ?? 0;
    return renewed === undefined || new Date(renewed).getTime() + duration * 1000 < now().getTime();
  };

  return {
    async acquire(loop, releaseUid, holder, durationSeconds): Promise<AcquireResult> {
      const name = leaseName(loop, releaseUid);
      const stamp = microTime(now());
      let current: V1Lease | undefined;
      try {
        current = await client.get<V1Lease>(pathOf(name));
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      const spec = { holderIdentity: holder, leaseDurationSeconds: durationSeconds, acquireTime: stamp, renewTime: stamp };
      try {
        if (current === undefined) {
          const created = await client.create<V1Lease>(pathOf(), {
            apiVersion: LEASES,
            kind: 'Lease',
            metadata: { name, namespace, labels: { [RELEASE_UID_LABEL]: releaseUid } },
            spec,
          });
          const lease: HeldLease = { name, holder, followUp: undefined };
          heldBy.set(lease, created);
          return { kind: 'acquired', lease };
        }
        if (!expired(current)) return { kind: 'busy', holder: current.spec?.holderIdentity ?? '' };
        const updated = await client.replace<V1Lease>(pathOf(name), { ...current, spec: { ...current.spec, ...spec } });
        const lease: HeldLease = { name, holder, followUp: followUpOf(current) };
        heldBy.set(lease, updated);
        return { kind: 'acquired', lease };
      } catch (error) {
        if (isConflict(error)) return { kind: 'busy', holder: '(raced)' };
        throw error;
      }
    },

    async release(lease, followUp) {
      const held = heldBy.get(lease);
      if (held === undefined) return;
      const annotations = { ...(held.metadata?.annotations ?? {}) };
      delete annotations[FOLLOW_UP_ID];
      delete annotations[FOLLOW_UP_DUE];
      if (followUp) {
        annotations[FOLLOW_UP_ID] = followUp.messageId;
        if (followUp.dueAt) annotations[FOLLOW_UP_DUE] = followUp.dueAt;
      }
      try {
        if (followUp === undefined) {
          // A free Lease without a follow-up records nothing, so it is deleted rather than kept: the
          // run that drops a deleted Release's last message (sent just before the relay removed the
          // Release's Leases) would otherwise leave a Lease behind for good. Only while still ours.
          await client.delete(pathOf(lease.name), {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            preconditions: { resourceVersion: held.metadata?.resourceVersion, uid: held.metadata?.uid },
          });
          return;
        }
        await client.replace(pathOf(lease.name), {
          ...held,
          metadata: { ...held.metadata, annotations },
          spec: { ...held.spec, holderIdentity: '', leaseDurationSeconds: held.spec?.leaseDurationSeconds ?? 1 },
        });
      } catch (error) {
        // Someone took it over after it expired: theirs now, nothing to give back.
        if (!isConflict(error) && !isNotFound(error)) throw error;
      } finally {
        heldBy.delete(lease);
      }
    },

    async removeAll(releaseUid) {
      await client.delete(pathOf(), undefined, { labelSelector: `${RELEASE_UID_LABEL}=${releaseUid}` });
    },

    async releaseUids() {
      const list = await client.list<V1Lease>(pathOf(), { labelSelector: RELEASE_UID_LABEL });
      return list.items.flatMap((lease) => {
        const uid = lease.metadata?.labels?.[RELEASE_UID_LABEL];
        return uid ? [uid] : [];
      });
    },
  };
}
