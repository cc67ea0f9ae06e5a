/**
 * The relay: informers → mapping → sender, plus the interval timers, all
 * run by the leader only. A replica that starts leading starts its
 * informers from scratch, so its first lists count every Release as new
 * and nothing that happened while no one led is missed; a replica that
 * stops leading drops its informers and whatever it had not sent yet.
 *
 * Release events are filtered by domain/relay/release-events.ts, events on
 * other kinds mapped by domain/relay/affected-releases.ts (the first list
 * of those kinds is not mapped: every Release is sent by its own first
 * list anyway), timers follow domain/relay/timers.ts from a one-second
 * tick over the in-memory Release index, and every send goes through the
 * coalescing sender (relay/send/queue-sender.ts).
 *
 * With a fleet queue the relay also watches ReleaseSets and sends them fleet
 * messages: relay/fleet-wiring.ts, composed here. Without one, sets are not watched at all.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Release } from '../domain/api/objects.ts';
import {
  affectedReleases,
  dependencyChangeCounts,
  type DependencyEvent,
  type DependencyKind,
} from '../domain/relay/affected-releases.ts';
import type { ReleaseKey } from '../domain/relay/coalesce.ts';
import { reconcileUpToDate } from '../domain/relay/up-to-date.ts';
import { releaseChangeCause } from '../domain/relay/release-events.ts';
import { dueLoops, dueTimes, observersNotified, type LastSent } from '../domain/relay/timers.ts';
import { orphanLeaseUids } from '../domain/runtime/lease.ts';
import { FLEET_LOOP, NOTIFY_LOOP, type Loop, type MessageLoop } from '../domain/runtime/queue-message.ts';
import { createLeasePort } from '../adapters/kube/lease.ts';
import { createFleetLeasePort } from './fleet-leases.ts';
import { createFleetWiring } from './fleet-wiring.ts';
import { createDependentsWiring } from './dependents.ts';
import { createNotifyWiring } from './notify-wiring.ts';
import { startLeaderElection } from './leader.ts';
import { createRelayMetrics, type RelayMetrics } from './metrics.ts';
import { createQueueSender, type QueueSender } from './send/queue-sender.ts';
import type { RelayOptions } from './relay-options.ts';
import { termInformers, type Watched } from './watch/informers.ts';
import type { InformerEvent, ResilientInformer } from './watch/resilient-informer.ts';

export { LIST_PAGE_SIZE } from './watch/informers.ts';
export type { RelayOptions } from './relay-options.ts';

export interface Relay {
  readonly metrics: RelayMetrics;
  /** Sends what is pending, stops the informers and gives up leadership. */
  stop(): Promise<void>;
  /** A follower once it has read the Lease; the leader once every informer has listed. */
  ready(): boolean;
  leading(): boolean;
  /**
   * Queues a message for one Release (or, with loop fleet, one ReleaseSet), e.g. from the Git
   * webhook; never throws. A fleet message without a fleet queue is dropped with a warning.
   * The leader sends through its term's sender (and counts it for the
   * timers); a follower, which a webhook can reach too, through a sender of
   * its own. Ignored once stop() was called.
   */
  enqueue(loop: MessageLoop, key: ReleaseKey, cause: string): void;
}

/** One leadership term: everything that runs only while this replica leads. */
interface Term {
  readonly sender: QueueSender;
  readonly releaseInformer: ResilientInformer<Watched>;
  readonly dependencies: ReadonlyMap<DependencyKind, ResilientInformer<Watched>>;
  readonly releaseSetInformer: ResilientInformer<Watched> | undefined;
  readonly tick: NodeJS.Timeout | undefined;
}

export function startRelay(options: RelayOptions): Relay {
  const { kube, logger, installationNamespace } = options;
  const now = options.now ?? (() => new Date());
  const metrics = createRelayMetrics();
  const leases = options.leases ?? createLeasePort(kube, installationNamespace);
  const fleetLeases = options.fleetLeases ?? createFleetLeasePort(kube, installationNamespace);
  const log = logger.child({ component: 'relay' });

  /** namespace → name → Release, as last parsed. */
  const index = new Map<string, Map<string, Release>>();
  metrics.observeReleases(() => [...index.values()].flatMap((byName) => [...byName.values()]));
  const fleet = options.fleetQueueUrl !== undefined;
  const fleetWiring = createFleetWiring({ enabled: fleet, metrics, log, fleetLeases, now });
  const dependents = createDependentsWiring(log, (ns, name) => index.get(ns)?.get(name));
  const notify = createNotifyWiring(options, log, (ns, name) => index.get(ns)?.get(name));
  /** namespace/name/uid → when each loop was last sent. */
  const lastSent = new Map<string, LastSent>();
  /**
   * Release → the earliest time one of its timers is due (ms), for this term. A Release changes
   * by replacement (each event brings a new object), and a send drops its entry, so the tick
   * recomputes due times only for Releases that changed, were sent, or are due: with 10,000
   * Releases it no longer parses every interval and date every second.
   */
  let nextDue = new WeakMap<Release, number>();
  let indexedCount = 0;
  let term: Term | undefined;
  /** A follower's sender for enqueue(), made on first use. */
  let followerSender: QueueSender | undefined;
  let transitions: Promise<void> = Promise.resolve();
  let stopping = false;

  const releaseId = (key: ReleaseKey) => `${key.namespace}/${key.name}/${key.uid}`;
  const keyOfRelease = (release: Release): ReleaseKey => ({
    namespace: release.metadata.namespace ?? '',
    name: release.metadata.name,
    uid: release.metadata.uid ?? '',
  });
  const indexed = (namespace: string) => [...(index.get(namespace)?.values() ?? [])];
  const setIndexed = (namespace: string, name: string, release: Release | undefined) => {
    let names = index.get(namespace);
    if (release !== undefined) {
      if (names === undefined) index.set(namespace, (names = new Map<string, Release>()));
      if (!names.has(name)) indexedCount += 1;
      names.set(name, release);
    } else if (names?.delete(name) === true) {
      indexedCount -= 1;
      if (names.size === 0) index.delete(namespace);
    }
    metrics.releases.set(indexedCount);
  };

  const send = (sender: QueueSender, loop: Loop, key: ReleaseKey, cause: string) => {
    if (key.uid === '') {
      log.warn('Release has no uid; not sent', { loop, namespace: key.namespace, release: key.name });
      return;
    }
    sender.enqueue(loop, key, cause);
    const id = releaseId(key);
    lastSent.set(id, { ...lastSent.get(id), [loop]: now() });
    const indexed = index.get(key.namespace)?.get(key.name);
    if (indexed !== undefined) nextDue.delete(indexed);
  };

  const onReleaseEvent = (
    sender: QueueSender,
    event: InformerEvent<Watched>,
    parseError: (object: Watched) => string | undefined,
  ) => {
    metrics.eventsSeen.inc({ kind: 'Release' });
    const namespace = event.object.metadata?.namespace ?? '';
    const name = event.object.metadata?.name ?? '';
    const old = index.get(namespace)?.get(name);
    let next: Release | undefined;
    if (event.type !== 'deleted') {
      // Parsed once at the informer (watch/informers.ts): the index holds the informer's object.
      const error = parseError(event.object);
      if (error !== undefined) {
        // Admission should prevent this; a Release that parses again later counts as added.
        log.warn('Release does not parse; ignored until it does', { namespace, release: name, error });
        setIndexed(namespace, name, undefined);
        fleetWiring.onChildEvent(sender, event, old, undefined);
        return;
      }
      next = event.object as Release;
    }
    setIndexed(namespace, name, next);
    fleetWiring.onChildEvent(sender, event, old, next);
    dependents.onRelease(old, next, event.initial, (r, c) => send(sender, 'reconcile', keyOfRelease(r), c));
    notify.onRelease(sender, event, old, next);
    // The reconcile sent this Release to the observers with the status write seen here.
    if (observersNotified(old, next) && next !== undefined) {
      const id = releaseId(keyOfRelease(next));
      lastSent.set(id, { ...lastSent.get(id), health: now(), drift: now() });
    }
    const cause = releaseChangeCause(old, next);
    if (cause === undefined) return;
    // The first list after taking the lead: an up-to-date Release waits for its timers.
    if (event.initial && next !== undefined && reconcileUpToDate(next)) return;
    metrics.eventsCounted.inc({ kind: 'Release' });
    const uid = next?.metadata.uid ?? old?.metadata.uid ?? event.object.metadata?.uid ?? '';
    const key: ReleaseKey = { namespace, name, uid };
    if (old !== undefined && next !== undefined && old.metadata.uid !== next.metadata.uid)
      forgetRelease(keyOfRelease(old));
    send(sender, 'reconcile', key, `watch: ${cause}`);
    if (event.type === 'deleted') forgetRelease(key);
  };

  const forgetRelease = (key: ReleaseKey) => {
    lastSent.delete(releaseId(key));
    if (key.uid === '') return;
    leases.removeAll(key.uid).catch((error: unknown) => {
      log.error('removing the Leases of a deleted Release failed', {
        namespace: key.namespace,
        release: key.name,
        uid: key.uid,
        error,
      });
    });
  };

  const onDependencyEvent = (
    sender: QueueSender,
    kind: DependencyKind,
    dependencies: ReadonlyMap<DependencyKind, ResilientInformer<Watched>>,
    event: InformerEvent<Watched>,
  ) => {
    metrics.eventsSeen.inc({ kind });
    if (kind === 'Cluster') fleetWiring.onClusterEvent(sender, event);
    if (event.initial) return;
    const change: DependencyEvent = {
      kind,
      old: event.type === 'added' ? undefined : event.old,
      next: event.type === 'deleted' ? undefined : event.object,
    };
    if (!dependencyChangeCounts(change)) return;
    metrics.eventsCounted.inc({ kind });
    const namespace = event.object.metadata?.namespace ?? '';
    const name = event.object.metadata?.name ?? '';
    const affected = affectedReleases(change, {
      releases: indexed(namespace),
      clusters: dependencies.get('Cluster')?.list(namespace) ?? [],
      gitRepositories: dependencies.get('GitRepository')?.list(namespace) ?? [],
    });
    for (const release of affected)
      send(sender, 'reconcile', keyOfRelease(release), `watch: ${kind} ${name} ${event.type}`);
  };

  const onTick = (sender: QueueSender, termStartedAt: Date) => {
    const at = now();
    const atMs = at.getTime();
    for (const names of index.values()) {
      for (const release of names.values()) {
        const cached = nextDue.get(release);
        if (cached !== undefined && cached > atMs) continue;
        const key = keyOfRelease(release);
        const id = releaseId(key);
        for (const loop of dueLoops(release, at, lastSent.get(id), termStartedAt))
          send(sender, loop, key, `timer: ${loop} interval`);
        const due = dueTimes(release, at, lastSent.get(id), termStartedAt);
        nextDue.set(
          release,
          Math.min(due.reconcile?.getTime() ?? Infinity, due.drift.getTime(), due.health.getTime()),
        );
      }
    }
    fleetWiring.onTick(sender, atMs, termStartedAt);
  };

  const newSender = () =>
    createQueueSender({
      sqs: options.sqs,
      queueUrls: { ...options.queueUrls, ...(fleet ? { fleet: options.fleetQueueUrl } : {}), ...notify.urls },
      logger: log,
      metrics,
      ...(options.windowMs === undefined ? {} : { windowMs: options.windowMs }),
      ...(options.minSpacingMs === undefined ? {} : { minSpacingMs: options.minSpacingMs }),
      now,
      // A Release just added travels with its message: its first reconcile needs no read.
      releaseOf: (key) => index.get(key.namespace)?.get(key.name),
    });

  const startTerm = () => {
    if (term !== undefined || stopping) return;
    metrics.leader.set(1);
    const sender = newSender();
    // Each informer keeps only what the relay reads of its objects (watch/slim.ts).
    const informers = termInformers({
      kube,
      logger: log,
      metrics,
      onRelease: (event) => onReleaseEvent(sender, event, (object) => informers.releaseParseError(object)),
      onDependency: (kind, event) => onDependencyEvent(sender, kind, dependencies, event),
      onReleaseSet: fleet
        ? (event) => {
            fleetWiring.onReleaseSetEvent(sender, event);
            dependents.onReleaseSet(event, (r, c) => send(sender, 'reconcile', keyOfRelease(r), c));
          }
        : undefined,
      listPageSize: options.listPageSize,
      watchSecrets: options.watchSecrets,
      relistIntervalMs: options.relistIntervalMs,
      backoff: options.informerBackoff,
    });
    const { releases: releaseInformer, dependencies, releaseSets: releaseSetInformer } = informers;
    releaseInformer.start();
    for (const informer of dependencies.values()) informer.start();
    releaseSetInformer?.start();
    notify.startTerm(sender);
    let swept = false;
    /**
     * The first tick after the Releases were listed: timers overdue then are spread over one
     * interval from it (domain/relay/timers.ts). From the term start instead, the slots that
     * passed while a large fleet was listed would all be due in that first tick.
     */
    let timersStartedAt: Date | undefined;
    const sweepOnce = () => {
      if (swept || !releaseInformer.hasSynced()) return;
      swept = true;
      sweepOrphanLeases().catch((error: unknown) =>
        log.warn('sweeping the Leases of deleted Releases failed', { error: error as Error }),
      );
    };
    const sweepSetsOnce = fleetWiring.orphanLeaseSweep(releaseSetInformer);
    const tick =
      options.timers === false
        ? undefined
        : setInterval(() => {
            sweepSetsOnce();
            if (!releaseInformer.hasSynced()) return;
            sweepOnce();
            timersStartedAt ??= now();
            onTick(sender, timersStartedAt);
          }, options.tickMs ?? 1_000);
    term = { sender, releaseInformer, dependencies, releaseSetInformer, tick };
    log.info('relay started sending');
  };

  /** Leases of Releases deleted while no relay led: their delete event was never seen. */
  const sweepOrphanLeases = async () => {
    const live = new Set(
      [...index.values()].flatMap((names) => [...names.values()].map((r) => r.metadata.uid ?? '')),
    );
    for (const uid of orphanLeaseUids(await leases.releaseUids(), live)) await leases.removeAll(uid);
  };

  const endTerm = async (flush: boolean) => {
    const ending = term;
    if (ending === undefined) return;
    term = undefined;
    clearInterval(ending.tick);
    await Promise.all([
      ending.releaseInformer.stop(),
      ...[...ending.dependencies.values()].map((i) => i.stop()),
      ...(ending.releaseSetInformer === undefined ? [] : [ending.releaseSetInformer.stop()]),
      notify.endTerm(),
    ]);
    await ending.sender.stop({ flush });
    index.clear();
    fleetWiring.reset();
    dependents.reset();
    indexedCount = 0;
    lastSent.clear();
    nextDue = new WeakMap<Release, number>();
    metrics.releases.set(0);
    metrics.leader.set(0);
    log.info(flush ? 'relay stopped sending' : 'relay lost leadership; stopped sending');
  };

  const transition = (work: () => void | Promise<void>) => {
    transitions = transitions
      .then(work)
      .catch((error: unknown) => log.error('relay leadership transition failed', { error }));
  };

  const elector = startLeaderElection({
    kube,
    namespace: installationNamespace,
    identity: options.identity ?? `${hostname()}-${randomUUID().slice(0, 8)}`,
    ...options.leaderElection,
    logger: log,
    now,
    onStartedLeading: () => transition(startTerm),
    onStoppedLeading: () => transition(() => endTerm(false)),
  });

  return {
    metrics,
    async stop() {
      stopping = true;
      await transitions;
      await endTerm(true);
      await followerSender?.stop({ flush: true });
      await elector.stop();
      await transitions;
    },
    ready() {
      if (!elector.hasObserved()) return false;
      if (!elector.isLeader()) return true;
      const current = term;
      return (
        current !== undefined &&
        current.releaseInformer.hasSynced() &&
        [...current.dependencies.values()].every((i) => i.hasSynced()) &&
        (current.releaseSetInformer?.hasSynced() ?? true) &&
        notify.hasSynced()
      );
    },
    leading: () => elector.isLeader() && term !== undefined,
    enqueue(loop, key, cause) {
      if (stopping) return;
      if (loop === FLEET_LOOP && !fleetWiring.admitsMessage(key, cause)) return;
      const current = term;
      if (current !== undefined) {
        if (loop === FLEET_LOOP) fleetWiring.sendTo(current.sender, key, cause);
        else if (loop === NOTIFY_LOOP) current.sender.enqueue(loop, key, cause);
        else send(current.sender, loop, key, cause);
        return;
      }
      if (key.uid === '') {
        log.warn('Release has no uid; not sent', { loop, namespace: key.namespace, release: key.name });
        return;
      }
      followerSender ??= newSender();
      followerSender.enqueue(loop, key, cause);
    },
  };
}
