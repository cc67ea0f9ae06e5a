import { ApiException, CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { leaseName, type AcquireResult, type FollowUp, type HeldLease, type LeasePort } from '../../domain/runtime/lease.ts';

const FOLLOW_UP_ID = 'convoy.dev/follow-up-message-id';
const FOLLOW_UP_DUE = 'convoy.dev/follow-up-due-at';
const RELEASE_UID_LABEL = 'convoy.dev/release-uid';

const isConflict = (e: unknown) => e instanceof ApiException && (e.code === 409 || e.code === 422);
const isNotFound = (e: unknown) => e instanceof ApiException && e.code === 404;

/**
 * Leases in the installation namespace, taken with resourceVersion
 * preconditions: of two runs that race, exactly one update succeeds.
 */
export function createLeasePort(kc: KubeConfig, namespace: string, now: () => Date = () => new Date()): LeasePort {
  const api = kc.makeApiClient(CoordinationV1Api);
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
      const stamp = new V1MicroTime(now().getTime());
      let current: V1Lease | undefined;
      try {
        current = await api.readNamespacedLease({ name, namespace });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      const spec = { holderIdentity: holder, leaseDurationSeconds: durationSeconds, acquireTime: stamp, renewTime: stamp };
      try {
        if (current === undefined) {
          const created = await api.createNamespacedLease({
            namespace,
            body: { metadata: { name, namespace, labels: { [RELEASE_UID_LABEL]: releaseUid } }, spec },
          });
          const lease: HeldLease = { name, holder, followUp: undefined };
          heldBy.set(lease, created);
          return { kind: 'acquired', lease };
        }
        if (!expired(current)) return { kind: 'busy', holder: current.spec?.holderIdentity ?? '' };
        const updated = await api.replaceNamespacedLease({
          name,
          namespace,
          body: { ...current, spec: { ...current.spec, ...spec } },
        });
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
        await api.replaceNamespacedLease({
          name: lease.name,
          namespace,
          body: {
            ...held,
            metadata: { ...held.metadata, annotations },
            spec: { ...held.spec, holderIdentity: '', leaseDurationSeconds: held.spec?.leaseDurationSeconds ?? 1 },
          },
        });
      } catch (error) {
        // Someone took it over after it expired: theirs now, nothing to give back.
        if (!isConflict(error) && !isNotFound(error)) throw error;
      } finally {
        heldBy.delete(lease);
      }
    },

    async removeAll(releaseUid) {
      await api.deleteCollectionNamespacedLease({ namespace, labelSelector: `${RELEASE_UID_LABEL}=${releaseUid}` });
    },
  };
}
