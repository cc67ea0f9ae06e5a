/**
 * The LeasePort on Kubernetes Leases: taking, renewing, giving back and removing a loop's Lease of
 * one Release (or ReleaseSet), each change a compare-and-swap. What is kept on the Lease object
 * and how it reads back is lease-format.ts.
 */
import {
  leaseName,
  type AcquireResult,
  type FollowUp,
  type HeldLease,
  type LeasePeek,
  type LeasePort,
} from '../../domain/runtime/lease.ts';
import { createKubeClient, isKubeApiError, KubeApiError, resourcePath } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';
import {
  busyOf,
  escapeKey,
  expired as isExpired,
  FORMAT,
  followUpAnnotations,
  HOLDER_SENT_AT,
  LAST_HOLDER,
  microTime,
  ownerLabelOf,
  PREVIOUS_SENT_AT,
  recordOf,
  releasedAnnotations,
  RELEASE_UID_LABEL,
  takeTime,
  type V1Lease,
} from './lease-format.ts';

export { microTime, RELEASE_SET_UID_LABEL } from './lease-format.ts';

const JSON_PATCH = 'application/json-patch+json';

const isNotFound = (e: unknown) => isKubeApiError(e, 404);
/** A compare-and-swap that lost: a failed JSON patch `test` (422), or a precondition/race (409). */
const lostRace = (e: unknown) => isKubeApiError(e, 409) || isKubeApiError(e, 422);

/**
 * Leases in the installation namespace. Every change is a compare-and-swap:
 * a JSON patch whose `test` names the holder it expects (the API server
 * re-applies a patch to the current object, so of two runs that race exactly
 * one succeeds), or a replace with the resourceVersion read. A Lease is kept
 * between runs (free: holderIdentity "", or the value a run's status write
 * closed it with: domain/runtime/lease-close.ts), so taking a free one costs
 * ONE request; it is created on first use (first, without a patch, when the
 * caller expects a Release's first run) and read only when the patch fails.
 */
export function createLeasePort(
  config: KubeClientConfig,
  namespace: string,
  now: () => Date = () => new Date(),
): LeasePort {
  const client = createKubeClient(config);
  const LEASES = 'coordination.k8s.io/v1';
  const pathOf = (name?: string) => resourcePath(LEASES, 'leases', namespace, name);
  /** The Lease as we last wrote it, per held lease. */
  const heldBy = new WeakMap<HeldLease, V1Lease>();

  const jsonPatch = async (name: string, ops: unknown[]): Promise<V1Lease> => {
    const response = await client.http({
      method: 'PATCH',
      path: pathOf(name),
      body: ops,
      contentType: JSON_PATCH,
    });
    if (response.status >= 200 && response.status <= 299) return response.body as V1Lease;
    throw new KubeApiError(`PATCH ${pathOf(name)}: HTTP ${response.status}`, response);
  };
  const expired = (lease: V1Lease) => isExpired(lease, now());
  const holding = (name: string, holder: string, stored: V1Lease, closedByRun = false): HeldLease => ({
    name,
    holder,
    ...recordOf(stored, closedByRun),
  });
  /** Tests that the Lease is still this take's: its holder and the take's unique acquireTime. */
  const ours = (lease: HeldLease, held: V1Lease) => [
    { op: 'test', path: '/spec/holderIdentity', value: lease.holder },
    ...(held.spec?.acquireTime
      ? [{ op: 'test', path: '/spec/acquireTime', value: held.spec.acquireTime }]
      : []),
  ];
  const track = (
    lease: HeldLease,
    stored: V1Lease,
    how: 'created' | 'free' | 'takenOver',
    freeAs?: string,
  ): AcquireResult => {
    heldBy.set(lease, stored);
    return { kind: 'acquired', lease, how, ...(freeAs === undefined ? {} : { freeAs }) };
  };

  return {
    async acquire(loop, releaseUid, holder, durationSeconds, sentAt, options = {}): Promise<AcquireResult> {
      const name = leaseName(loop, releaseUid);
      const at = now();
      const stamp = microTime(at);
      const specOf = (who: string) => ({
        holderIdentity: who,
        leaseDurationSeconds: durationSeconds,
        acquireTime: takeTime(at),
        renewTime: stamp,
      });
      const spec = specOf(holder);
      const closedAs = options.closedAs ?? '';
      /** The common case: the Lease exists and is free as `free` (taken by `who`); else whether it is missing or held. */
      const takeFree = async (free: string, who = holder): Promise<{ taken?: V1Lease; missing: boolean }> => {
        try {
          const taken = await jsonPatch(name, [
            { op: 'test', path: '/spec/holderIdentity', value: free },
            {
              op: 'copy',
              from: `/metadata/annotations/${escapeKey(HOLDER_SENT_AT)}`,
              path: `/metadata/annotations/${escapeKey(PREVIOUS_SENT_AT)}`,
            },
            ...Object.entries(specOf(who)).map(([field, value]) => ({
              op: 'add',
              path: `/spec/${field}`,
              value,
            })),
            { op: 'add', path: `/metadata/annotations/${escapeKey(HOLDER_SENT_AT)}`, value: sentAt ?? '' },
          ]);
          return { taken, missing: false };
        } catch (error) {
          if (isNotFound(error)) return { missing: true };
          if (lostRace(error)) return { missing: false };
          throw error;
        }
      };
      /** Moves a held take to a later holder when its own repeats one that already ran (options.unique). */
      const uniqueHolder = async (
        taken: V1Lease,
        who: string,
        earlier: string | undefined,
      ): Promise<{ stored: V1Lease; who: string }> => {
        const later = earlier === undefined || earlier === '' ? undefined : options.unique?.(who, earlier);
        if (later === undefined) return { stored: taken, who };
        const moved = await jsonPatch(name, [
          { op: 'test', path: '/spec/holderIdentity', value: who },
          { op: 'test', path: '/spec/acquireTime', value: taken.spec?.acquireTime ?? '' },
          { op: 'add', path: '/spec/holderIdentity', value: later },
        ]);
        return { stored: moved, who: later };
      };
      const tookFree = async (free: string, taken: V1Lease, planned = holder): Promise<AcquireResult> => {
        let unique: { stored: V1Lease; who: string };
        try {
          unique = await uniqueHolder(taken, planned, taken.metadata?.annotations?.[LAST_HOLDER]);
        } catch (error) {
          // Taken over or removed between the two patches: not ours any more.
          if (lostRace(error) || isNotFound(error)) return { kind: 'busy', holder: '(raced)' };
          throw error;
        }
        return track(holding(name, unique.who, unique.stored, free !== ''), unique.stored, 'free', free);
      };
      /** A Lease of a Release's first run: created held. undefined: it exists already. */
      const create = async (): Promise<V1Lease | undefined> => {
        const followUp = followUpAnnotations(options.followUpOnCreate);
        try {
          return await client.create<V1Lease>(pathOf(), {
            apiVersion: LEASES,
            kind: 'Lease',
            metadata: {
              name,
              namespace,
              labels: { [ownerLabelOf(loop)]: releaseUid },
              annotations: { [FORMAT]: '2', [HOLDER_SENT_AT]: sentAt ?? '', ...followUp },
            },
            spec,
          });
        } catch (createError) {
          if (!isKubeApiError(createError, 409)) throw createError;
          return undefined;
        }
      };
      // A Release's first run creates its Lease in one request; every later run takes it in one.
      if (options.createFirst === true) {
        const created = await create();
        if (created !== undefined) return track(holding(name, holder, created), created, 'created');
        const free = await takeFree(closedAs);
        if (free.taken !== undefined) return tookFree(closedAs, free.taken);
      } else {
        const free = await takeFree(closedAs);
        if (free.taken !== undefined) return tookFree(closedAs, free.taken);
        if (free.missing) {
          const created = await create();
          if (created !== undefined) return track(holding(name, holder, created), created, 'created');
        }
      }
      // Held, free under another value than we expected, or of an older format: read it.
      let current: V1Lease;
      try {
        current = await client.get<V1Lease>(pathOf(name));
      } catch (error) {
        if (isNotFound(error)) return { kind: 'busy', holder: '(raced)' };
        throw error;
      }
      const seen = current.spec?.holderIdentity ?? '';
      const again = async (free: string): Promise<AcquireResult> => {
        // Free as another value than the caller expected: a run closed it since; take it with a holder after that one.
        const who =
          free !== closedAs && options.holderAfter !== undefined ? options.holderAfter(free) : holder;
        const retried = await takeFree(free, who);
        return retried.taken !== undefined
          ? tookFree(free, retried.taken, who)
          : { kind: 'busy', holder: '(raced)' };
      };
      if (seen === '' || seen === closedAs) return again(seen);
      if (options.reread !== undefined && !expired(current)) {
        // Closed by a status write our view of the Release did not show yet?
        const fresh = await options.reread();
        if (fresh !== '' && fresh === seen) return again(seen);
      }
      if (!expired(current)) return busyOf(current);
      try {
        const annotations: Record<string, string> = {
          ...(current.metadata?.annotations ?? {}),
          [FORMAT]: '2',
          [HOLDER_SENT_AT]: sentAt ?? '',
        };
        // Neither the crashed holder nor the last one given back may repeat.
        const who = [seen, annotations[LAST_HOLDER]].reduce<string>(
          (planned, earlier) => (earlier ? (options.unique?.(planned, earlier) ?? planned) : planned),
          holder,
        );
        const updated = await client.replace<V1Lease>(pathOf(name), {
          ...current,
          metadata: { ...current.metadata, annotations },
          spec: { ...current.spec, ...specOf(who) },
        });
        return track(holding(name, who, updated), updated, 'takenOver');
      } catch (error) {
        if (lostRace(error)) return { kind: 'busy', holder: '(raced)' };
        throw error;
      }
    },

    async peek(loop, releaseUid): Promise<LeasePeek> {
      let current: V1Lease;
      try {
        current = await client.get<V1Lease>(pathOf(leaseName(loop, releaseUid)));
      } catch (error) {
        if (isNotFound(error)) return { kind: 'missing' };
        throw error;
      }
      const holder = current.spec?.holderIdentity ?? '';
      if (holder === '') return { kind: 'free', record: recordOf(current) };
      return expired(current) ? { kind: 'expired', record: recordOf(current) } : busyOf(current);
    },

    async renew(lease) {
      const held = heldBy.get(lease);
      if (held === undefined) return false;
      try {
        const renewed = await jsonPatch(lease.name, [
          ...ours(lease, held),
          { op: 'add', path: '/spec/renewTime', value: microTime(now()) },
        ]);
        heldBy.set(lease, renewed);
        return true;
      } catch (error) {
        if (lostRace(error) || isNotFound(error)) return false;
        throw error;
      }
    },

    async release(lease, followUp, record = {}, options = {}) {
      const held = heldBy.get(lease);
      if (held === undefined) return;
      heldBy.delete(lease);
      const annotations = releasedAnnotations(held, lease, followUp, record);
      try {
        await jsonPatch(lease.name, [
          ...ours(lease, held),
          { op: 'add', path: '/spec/holderIdentity', value: options.closeAs ?? '' },
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
