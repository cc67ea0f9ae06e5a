import { leaseName, type AcquireResult, type FollowUp, type HeldLease, type LeasePort, type LeaseRecord } from '../../domain/runtime/lease.ts';
import { createKubeClient, isKubeApiError, KubeApiError, resourcePath } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';

const FOLLOW_UP_ID = 'convoy.dev/follow-up-message-id';
const FOLLOW_UP_DUE = 'convoy.dev/follow-up-due-at';
const FAILURES = 'convoy.dev/failures';
const HANDLED_SENT_AT = 'convoy.dev/handled-sent-at';
const HOLDER_SENT_AT = 'convoy.dev/holder-sent-at';
/** Always present, so JSON patches can add single annotations. */
const FORMAT = 'convoy.dev/lease-format';
const RELEASE_UID_LABEL = 'convoy.dev/release-uid';
const JSON_PATCH = 'application/json-patch+json';

const isNotFound = (e: unknown) => isKubeApiError(e, 404);
/** A compare-and-swap that lost: a failed JSON patch `test` (422), or a precondition/race (409). */
const lostRace = (e: unknown) => isKubeApiError(e, 409) || isKubeApiError(e, 422);

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

const escapeKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

function recordOf(lease: V1Lease): LeaseRecord {
  const annotations = lease.metadata?.annotations ?? {};
  const id = annotations[FOLLOW_UP_ID];
  const dueAt = annotations[FOLLOW_UP_DUE];
  const failures = Number(annotations[FAILURES] ?? '0');
  return {
    followUp: id ? (dueAt ? { messageId: id, dueAt } : { messageId: id }) : undefined,
    failures: Number.isInteger(failures) && failures > 0 ? failures : 0,
    handledSentAt: annotations[HANDLED_SENT_AT] || undefined,
  };
}

/**
 * Leases in the installation namespace. Every change is a compare-and-swap:
 * a JSON patch whose `test` names the holder it expects (the API server
 * re-applies a patch to the current object, so of two runs that race exactly
 * one succeeds), or a replace with the resourceVersion read. A Lease is kept
 * between runs (free: holderIdentity ""), so taking a free one costs ONE
 * request; it is created on first use and read only when the patch fails.
 */
export function createLeasePort(config: KubeClientConfig, namespace: string, now: () => Date = () => new Date()): LeasePort {
  const client = createKubeClient(config);
  const LEASES = 'coordination.k8s.io/v1';
  const pathOf = (name?: string) => resourcePath(LEASES, 'leases', namespace, name);
  /** The Lease as we last wrote it, per held lease. */
  const heldBy = new WeakMap<HeldLease, V1Lease>();

  const jsonPatch = async (name: string, ops: unknown[]): Promise<V1Lease> => {
    const response = await client.http({ method: 'PATCH', path: pathOf(name), body: ops, contentType: JSON_PATCH });
    if (response.status >= 200 && response.status <= 299) return response.body as V1Lease;
    throw new KubeApiError(`PATCH ${pathOf(name)}: HTTP ${response.status}`, response);
  };
  const expired = (lease: V1Lease) => {
    const holder = lease.spec?.holderIdentity;
    if (!holder) return true;
    const renewed = lease.spec?.renewTime ?? lease.spec?.acquireTime;
    const duration = lease.spec?.leaseDurationSeconds ?? 0;
    return renewed === undefined || new Date(renewed).getTime() + duration * 1000 < now().getTime();
  };
  const holding = (name: string, holder: string, stored: V1Lease): HeldLease => ({ name, holder, ...recordOf(stored) });
  const track = (lease: HeldLease, stored: V1Lease): AcquireResult => {
    heldBy.set(lease, stored);
    return { kind: 'acquired', lease };
  };

  return {
    async acquire(loop, releaseUid, holder, durationSeconds, sentAt): Promise<AcquireResult> {
      const name = leaseName(loop, releaseUid);
      const stamp = microTime(now());
      const spec = { holderIdentity: holder, leaseDurationSeconds: durationSeconds, acquireTime: stamp, renewTime: stamp };
      // The common case: the Lease exists and is free.
      try {
        const taken = await jsonPatch(name, [
          { op: 'test', path: '/spec/holderIdentity', value: '' },
          ...Object.entries(spec).map(([field, value]) => ({ op: 'add', path: `/spec/${field}`, value })),
          { op: 'add', path: `/metadata/annotations/${escapeKey(HOLDER_SENT_AT)}`, value: sentAt ?? '' },
        ]);
        return track(holding(name, holder, taken), taken);
      } catch (error) {
        if (!isNotFound(error) && !lostRace(error)) throw error;
        if (isNotFound(error)) {
          try {
            const created = await client.create<V1Lease>(pathOf(), {
              apiVersion: LEASES,
              kind: 'Lease',
              metadata: { name, namespace, labels: { [RELEASE_UID_LABEL]: releaseUid }, annotations: { [FORMAT]: '2', [HOLDER_SENT_AT]: sentAt ?? '' } },
              spec,
            });
            return track(holding(name, holder, created), created);
          } catch (createError) {
            if (!isKubeApiError(createError, 409)) throw createError;
          }
        }
      }
      // Held by someone (or a Lease of an older format): read it, and take it over only when expired.
      let current: V1Lease;
      try {
        current = await client.get<V1Lease>(pathOf(name));
      } catch (error) {
        if (isNotFound(error)) return { kind: 'busy', holder: '(raced)' };
        throw error;
      }
      if (!expired(current)) {
        return {
          kind: 'busy',
          holder: current.spec?.holderIdentity ?? '',
          holderSentAt: current.metadata?.annotations?.[HOLDER_SENT_AT] || undefined,
          renewedAt: current.spec?.renewTime ?? current.spec?.acquireTime,
          durationSeconds: current.spec?.leaseDurationSeconds,
        };
      }
      try {
        const annotations = { ...(current.metadata?.annotations ?? {}), [FORMAT]: '2', [HOLDER_SENT_AT]: sentAt ?? '' };
        const updated = await client.replace<V1Lease>(pathOf(name), {
          ...current,
          metadata: { ...current.metadata, annotations },
          spec: { ...current.spec, ...spec },
        });
        return track(holding(name, holder, updated), updated);
      } catch (error) {
        if (lostRace(error)) return { kind: 'busy', holder: '(raced)' };
        throw error;
      }
    },

    async renew(lease) {
      if (!heldBy.has(lease)) return false;
      try {
        const renewed = await jsonPatch(lease.name, [
          { op: 'test', path: '/spec/holderIdentity', value: lease.holder },
          { op: 'add', path: '/spec/renewTime', value: microTime(now()) },
        ]);
        heldBy.set(lease, renewed);
        return true;
      } catch (error) {
        if (lostRace(error) || isNotFound(error)) return false;
        throw error;
      }
    },

    async release(lease, followUp, record = {}) {
      const held = heldBy.get(lease);
      if (held === undefined) return;
      heldBy.delete(lease);
      const annotations: Record<string, string> = { ...(held.metadata?.annotations ?? {}), [FORMAT]: '2', [HOLDER_SENT_AT]: '' };
      delete annotations[FOLLOW_UP_ID];
      delete annotations[FOLLOW_UP_DUE];
      if (followUp) {
        annotations[FOLLOW_UP_ID] = followUp.messageId;
        if (followUp.dueAt) annotations[FOLLOW_UP_DUE] = followUp.dueAt;
      }
      const failures = record.failures ?? lease.failures;
      if (failures > 0) annotations[FAILURES] = String(failures);
      else delete annotations[FAILURES];
      const handled = record.handledSentAt ?? lease.handledSentAt;
      if (handled !== undefined) annotations[HANDLED_SENT_AT] = handled;
      try {
        await jsonPatch(lease.name, [
          { op: 'test', path: '/spec/holderIdentity', value: lease.holder },
          { op: 'add', path: '/spec/holderIdentity', value: '' },
          { op: 'add', path: '/metadata/annotations', value: annotations },
        ]);
      } catch (error) {
        // Someone took it over after it expired, or the relay removed it: nothing to give back.
        if (!lostRace(error) && !isNotFound(error)) throw error;
      }
    },

    async forget(lease) {
      const held = heldBy.get(lease);
      heldBy.delete(lease);
      try {
        await client.delete(pathOf(lease.name), {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          preconditions: { uid: held?.metadata?.uid },
        });
      } catch (error) {
        if (!lostRace(error) && !isNotFound(error)) throw error;
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

export type { FollowUp };
