/**
 * The relay's fleet side: with a fleet queue the relay watches ReleaseSets and sends
 * a set a fleet message when domain/relay/fleet-triggers.ts says so: on its add, generation and
 * request annotations, on a Cluster of its namespace added, deleted, relabelled or reannotated
 * (not for its last-applied-configuration), and on a child Release's verdict change; on its
 * interval timer (domain/relay/set-timers.ts); and when the Git webhook names it. Coalesced per
 * set by the sender (FLEET_COALESCE_RULE). A deleted or recreated set's Lease is removed, and
 * once per term, after the first list of sets, the Leases of sets deleted while no relay led are
 * swept (relay/fleet-leases.ts).
 *
 * relay/relay.ts composes this with the Release side: it holds this term's cache of sets and
 * timers, which reset() drops when the term ends. Without a fleet queue (enabled false) sets are
 * not watched, and the Release and Cluster handlers here do nothing.
 */
import type { Release } from '../domain/api/objects.ts';
import type { ReleaseKey } from '../domain/relay/coalesce.ts';
import {
  childVerdictNotices,
  clusterChangeCause,
  releaseSetChangeCause,
  type WatchedReleaseSet,
} from '../domain/relay/fleet-triggers.ts';
import { releaseSetTimerDue, SET_TIMER_CAUSE, type TimedReleaseSet } from '../domain/relay/set-timers.ts';
import { orphanLeaseUids } from '../domain/runtime/lease.ts';
import { FLEET_LOOP } from '../domain/runtime/queue-message.ts';
import type { Logger } from '../platform/logger.ts';
import type { FleetLeasePort } from './fleet-leases.ts';
import type { RelayMetrics } from './metrics.ts';
import type { QueueSender } from './send/queue-sender.ts';
import type { Watched } from './watch/informers.ts';
import type { InformerEvent, ResilientInformer } from './watch/resilient-informer.ts';

export interface FleetWiringOptions {
  /** A fleet queue is configured (RelayOptions.fleetQueueUrl). */
  readonly enabled: boolean;
  readonly metrics: RelayMetrics;
  /** The relay's logger (component relay). */
  readonly log: Logger;
  readonly fleetLeases: FleetLeasePort;
  readonly now: () => Date;
}

export interface FleetWiring {
  /** The ReleaseSet informer's events (only with a fleet queue). */
  onReleaseSetEvent(sender: QueueSender, event: InformerEvent<Watched>): void;
  /** A Release event, with the Release as indexed before and after it: its set(s)' child notices. */
  onChildEvent(
    sender: QueueSender,
    event: InformerEvent<Watched>,
    old: Release | undefined,
    next: Release | undefined,
  ): void;
  /** A Cluster event: every set of its namespace, if the Cluster may start or stop matching or its labels or annotations changed. */
  onClusterEvent(sender: QueueSender, event: InformerEvent<Watched>): void;
  /** The sets' part of the timer tick: sends each set whose interval timer is due at `atMs`. */
  onTick(sender: QueueSender, atMs: number, termStartedAt: Date): void;
  /**
   * Once per term, from the tick: after the first list of sets, sweeps the fleet Leases whose set
   * is gone. A new function per term (its own once flag).
   */
  orphanLeaseSweep(releaseSetInformer: ResilientInformer<Watched> | undefined): () => void;
  /** false, with a warning, for a fleet message without a fleet queue (Relay.enqueue). */
  admitsMessage(key: ReleaseKey, cause: string): boolean;
  /** A fleet message from outside the watch (the Git webhook), while leading. */
  sendTo(sender: QueueSender, key: ReleaseKey, cause: string): void;
  /** The term ended: forget its sets and timers. */
  reset(): void;
}

type Trigger = 'set' | 'cluster' | 'child' | 'timer' | 'webhook';

export function createFleetWiring(options: FleetWiringOptions): FleetWiring {
  const { enabled: fleet, metrics, log, fleetLeases, now } = options;
  /** namespace → name → ReleaseSet (slim), while the relay watches sets. */
  type KeptReleaseSet = Watched & WatchedReleaseSet & TimedReleaseSet;
  const sets = new Map<string, Map<string, KeptReleaseSet>>();
  if (fleet) metrics.observeReleaseSets(() => [...sets.values()].flatMap((byName) => [...byName.values()]));
  /** Set uid → its last fleet message this term (domain/relay/set-timers.ts). */
  const setLastSent = new Map<string, Date>();
  /** Set (as kept) → when its timer is due (ms), cached as nextDue is for Releases. */
  let setNextDue = new WeakMap<object, number>();

  /**
   * Sends the set `name` of `namespace` a fleet message, if the relay knows it (its uid). Every
   * send but the first list's restarts the set's timer (set-timers.ts).
   */
  const sendFleet = (
    sender: QueueSender,
    trigger: Trigger,
    namespace: string,
    name: string,
    cause: string,
    initial = false,
  ) => {
    const set = sets.get(namespace)?.get(name);
    const uid = set?.metadata?.uid;
    if (set === undefined || uid === undefined || uid === '') return;
    metrics.fleetNotices.inc({ trigger });
    log.debug('fleet notice', { namespace, set: name, trigger, cause });
    sender.enqueue(FLEET_LOOP, { namespace, name, uid }, cause);
    if (initial) return;
    setLastSent.set(uid, now());
    setNextDue.delete(set);
  };

  const forgetReleaseSet = (namespace: string, name: string, uid: string) => {
    setLastSent.delete(uid);
    fleetLeases.removeAllOfSet(uid).catch((error: unknown) => {
      log.error('removing the Lease of a deleted ReleaseSet failed', {
        namespace,
        releaseSet: name,
        uid,
        error,
      });
    });
  };

  /** The fleet Leases of ReleaseSets deleted while no relay led (after the first list of sets). */
  const sweepOrphanSetLeases = async () => {
    const leased = await fleetLeases.releaseSetUids();
    // The sets known after the list: a Lease listed was created for a set the relay had seen by then.
    const live = new Set(
      [...sets.values()].flatMap((names) => [...names.values()].map((set) => set.metadata?.uid ?? '')),
    );
    for (const uid of orphanLeaseUids(leased, live)) await fleetLeases.removeAllOfSet(uid);
  };

  return {
    onReleaseSetEvent(sender, event) {
      metrics.eventsSeen.inc({ kind: 'ReleaseSet' });
      const namespace = event.object.metadata?.namespace ?? '';
      const name = event.object.metadata?.name ?? '';
      let names = sets.get(namespace);
      const old = names?.get(name);
      const next = event.type === 'deleted' ? undefined : (event.object as KeptReleaseSet);
      if (next === undefined) {
        names?.delete(name);
        if (names?.size === 0) sets.delete(namespace);
      } else {
        if (names === undefined) sets.set(namespace, (names = new Map<string, KeptReleaseSet>()));
        names.set(name, next);
      }
      // A set deleted, or recreated under a new uid: the old uid's Lease has no set any more.
      const oldUid =
        old?.metadata?.uid ?? (event.type === 'deleted' ? event.object.metadata?.uid : undefined);
      if (oldUid !== undefined && oldUid !== '' && oldUid !== next?.metadata?.uid)
        forgetReleaseSet(namespace, name, oldUid);
      const cause = releaseSetChangeCause(old, next);
      if (cause === undefined) return;
      metrics.eventsCounted.inc({ kind: 'ReleaseSet' });
      sendFleet(sender, 'set', namespace, name, `watch: ${cause}`, event.initial);
    },

    // The first list is left out: each set's own first list sends it.
    onChildEvent(sender, event, old, next) {
      if (!fleet || event.initial) return;
      const namespace = event.object.metadata?.namespace ?? '';
      for (const notice of childVerdictNotices(old, next))
        sendFleet(sender, 'child', namespace, notice.set, `watch: ${notice.cause}`);
    },

    onClusterEvent(sender, event) {
      if (!fleet || event.initial) return;
      const cause = clusterChangeCause(
        event.type === 'added' ? undefined : event.old,
        event.type === 'deleted' ? undefined : event.object,
      );
      if (cause === undefined) return;
      const namespace = event.object.metadata?.namespace ?? '';
      for (const name of sets.get(namespace)?.keys() ?? [])
        sendFleet(sender, 'cluster', namespace, name, `watch: ${cause}`);
    },

    onTick(sender, atMs, termStartedAt) {
      for (const [namespace, names] of sets) {
        for (const [name, set] of names) {
          const cached = setNextDue.get(set);
          if (cached !== undefined && cached > atMs) continue;
          const uid = set.metadata?.uid ?? '';
          const due = releaseSetTimerDue(set, setLastSent.get(uid), termStartedAt);
          if (due !== undefined && due <= atMs) sendFleet(sender, 'timer', namespace, name, SET_TIMER_CAUSE);
          setNextDue.set(set, releaseSetTimerDue(set, setLastSent.get(uid), termStartedAt) ?? Infinity);
        }
      }
    },

    orphanLeaseSweep(releaseSetInformer) {
      let swept = false;
      return () => {
        if (swept || releaseSetInformer?.hasSynced() !== true) return;
        swept = true;
        sweepOrphanSetLeases().catch((error: unknown) =>
          log.warn('sweeping the Leases of deleted ReleaseSets failed', { error: error as Error }),
        );
      };
    },

    admitsMessage(key, cause) {
      if (fleet) return true;
      log.warn('no fleet queue: a ReleaseSet message is not sent', {
        namespace: key.namespace,
        releaseSet: key.name,
        cause,
      });
      return false;
    },

    sendTo(sender, key, cause) {
      const known = sets.get(key.namespace)?.get(key.name);
      if (known?.metadata?.uid === key.uid) {
        sendFleet(sender, 'webhook', key.namespace, key.name, cause);
        return;
      }
      // Not in this term's list yet (or just recreated): sent as named; its timer is not touched.
      if (key.uid === '') return;
      metrics.fleetNotices.inc({ trigger: 'webhook' });
      sender.enqueue(FLEET_LOOP, key, cause);
    },

    reset() {
      sets.clear();
      setLastSent.clear();
      setNextDue = new WeakMap<object, number>();
    },
  };
}
