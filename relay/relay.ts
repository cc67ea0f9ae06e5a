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
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { CustomObjectsApi, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, parseRelease, type Release } from '../domain/api/index.ts';
import {
  affectedReleases,
  dependencyChangeCounts,
  WATCH_LABEL_SELECTOR,
  type DependencyEvent,
  type DependencyKind,
} from '../domain/relay/affected-releases.ts';
import type { ReleaseKey } from '../domain/relay/coalesce.ts';
import { reconcileUpToDate } from '../domain/relay/up-to-date.ts';
import { releaseChangeCause } from '../domain/relay/release-events.ts';
import { dueLoops, observersNotified, type LastSent } from '../domain/relay/timers.ts';
import { orphanLeaseUids, type LeasePort } from '../domain/runtime/lease.ts';
import type { Loop } from '../domain/runtime/queue-message.ts';
import { fromClientNodeKubeConfig } from '../adapters/kube/client-node-config.ts';
import { createLeasePort } from '../adapters/kube/lease.ts';
import type { Logger } from '../functions/runtime/logger.ts';
import { startLeaderElection } from './leader.ts';
import { createRelayMetrics, type RelayMetrics } from './metrics.ts';
import { createQueueSender, type BatchSendPort, type QueueSender } from './send/queue-sender.ts';
import { metadataOnlyListWatch } from './watch/metadata-only.ts';
import { once, slimDependency, slimRelease } from './watch/slim.ts';
import { createResilientInformer, type InformerEvent, type ListFunction, type ListWatchLike, type ResilientInformer } from './watch/resilient-informer.ts';

export interface RelayOptions {
  readonly kc: KubeConfig;
  /** An SQSClient (only SendMessageBatch is used). */
  readonly sqs: BatchSendPort;
  readonly queueUrls: Readonly<Record<Loop, string>>;
  /** Where the leader Lease and the per-Release Leases live. */
  readonly installationNamespace: string;
  readonly logger: Logger;
  /** Removes a deleted Release's Leases; default the Kubernetes Leases in the installation namespace. */
  readonly leases?: Pick<LeasePort, 'removeAll' | 'releaseUids'> & Partial<LeasePort>;
  readonly now?: () => Date;
  /** Interval timers (reconcile, drift, health); default true. */
  readonly timers?: boolean;
  /** Leader identity; default hostname + random suffix. */
  readonly identity?: string;
  /** Timer tick; default 1 s. */
  readonly tickMs?: number;
  /** Coalescing window and per-Release spacing of the sender; defaults 200 ms and 1 s. */
  readonly windowMs?: number;
  readonly minSpacingMs?: number;
  /** Periodic relist of every informer; default 10 min. */
  readonly relistIntervalMs?: number;
  readonly informerBackoff?: { readonly initialMs: number; readonly maxMs: number };
  readonly leaderElection?: { readonly leaseDurationMs?: number; readonly renewIntervalMs?: number };
  /** Objects per list page of the convoy kinds; default LIST_PAGE_SIZE (500). */
  readonly listPageSize?: number;
  /** Watch labelled Secrets (metadata only); default true. false: Secret changes wait for the interval. */
  readonly watchSecrets?: boolean;
}

export interface Relay {
  readonly metrics: RelayMetrics;
  /** Sends what is pending, stops the informers and gives up leadership. */
  stop(): Promise<void>;
  /** A follower once it has read the Lease; the leader once every informer has listed. */
  ready(): boolean;
  leading(): boolean;
  /**
   * Queues a message for one Release, e.g. from the Git webhook; never throws.
   * The leader sends through its term's sender (and counts it for the
   * timers); a follower, which a webhook can reach too, through a sender of
   * its own. Ignored once stop() was called.
   */
  enqueue(loop: Loop, key: ReleaseKey, cause: string): void;
}

/** A watched object as the relay reads it (raw from the watch, or a list item). */
type Watched = KubernetesObject & { spec?: unknown; data?: unknown; binaryData?: unknown };

const RELEASE_PATH = `/apis/${API_GROUP}/${API_VERSION}/releases`;

/**
 * Objects per list page. A list of 10,000 Releases in one answer is tens of MB of JSON and more
 * as objects, all alive at once; by pages, each page is slimmed (watch/slim.ts) before the next
 * is read, as client-go's informers page at 500.
 */
export const LIST_PAGE_SIZE = 500;

const CUSTOM_DEPENDENCIES: readonly { kind: DependencyKind; plural: string }[] = [
  { kind: 'Cluster', plural: 'clusters' },
  { kind: 'Mutation', plural: 'mutations' },
  { kind: 'Lifecycle', plural: 'lifecycles' },
  { kind: 'GitRepository', plural: 'gitrepositories' },
];

/** One leadership term: everything that runs only while this replica leads. */
interface Term {
  readonly sender: QueueSender;
  readonly releaseInformer: ResilientInformer<Watched>;
  readonly dependencies: ReadonlyMap<DependencyKind, ResilientInformer<Watched>>;
  readonly tick: NodeJS.Timeout | undefined;
}

export function startRelay(options: RelayOptions): Relay {
  const { kc, logger, installationNamespace } = options;
  const now = options.now ?? (() => new Date());
  const metrics = createRelayMetrics();
  const leases = options.leases ?? createLeasePort(fromClientNodeKubeConfig(kc), installationNamespace);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const log = logger.child({ component: 'relay' });

  /** namespace → name → Release, as last parsed. */
  const index = new Map<string, Map<string, Release>>();
  metrics.observeReleases(() => [...index.values()].flatMap((byName) => [...byName.values()]));
  /** namespace/name/uid → when each loop was last sent. */
  const lastSent = new Map<string, LastSent>();
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
      names.set(name, release);
    } else if (names !== undefined) {
      names.delete(name);
      if (names.size === 0) index.delete(namespace);
    }
    metrics.releases.set([...index.values()].reduce((n, names) => n + names.size, 0));
  };

  const send = (sender: QueueSender, loop: Loop, key: ReleaseKey, cause: string) => {
    if (key.uid === '') {
      log.warn('Release has no uid; not sent', { loop, namespace: key.namespace, release: key.name });
      return;
    }
    sender.enqueue(loop, key, cause);
    const id = releaseId(key);
    lastSent.set(id, { ...lastSent.get(id), [loop]: now() });
  };

  const onReleaseEvent = (sender: QueueSender, event: InformerEvent<Watched>) => {
    metrics.eventsSeen.inc({ kind: 'Release' });
    const namespace = event.object.metadata?.namespace ?? '';
    const name = event.object.metadata?.name ?? '';
    const old = index.get(namespace)?.get(name);
    let next: Release | undefined;
    if (event.type !== 'deleted') {
      const parsed = parseRelease(event.object);
      if (!parsed.ok) {
        // Admission should prevent this; a Release that parses again later counts as added.
        log.warn('Release does not parse; ignored until it does', { namespace, release: name, error: parsed.error });
        setIndexed(namespace, name, undefined);
        return;
      }
      next = parsed.value;
    }
    setIndexed(namespace, name, next);
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
    if (old !== undefined && next !== undefined && old.metadata.uid !== next.metadata.uid) forgetRelease(keyOfRelease(old));
    send(sender, 'reconcile', key, `watch: ${cause}`);
    if (event.type === 'deleted') forgetRelease(key);
  };

  const forgetRelease = (key: ReleaseKey) => {
    lastSent.delete(releaseId(key));
    if (key.uid === '') return;
    leases.removeAll(key.uid).catch((error: unknown) => {
      log.error('removing the Leases of a deleted Release failed', { namespace: key.namespace, release: key.name, uid: key.uid, error });
    });
  };

  const onDependencyEvent = (
    sender: QueueSender,
    kind: DependencyKind,
    dependencies: ReadonlyMap<DependencyKind, ResilientInformer<Watched>>,
    event: InformerEvent<Watched>,
  ) => {
    metrics.eventsSeen.inc({ kind });
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
    for (const release of affected) send(sender, 'reconcile', keyOfRelease(release), `watch: ${kind} ${name} ${event.type}`);
  };

  const onTick = (sender: QueueSender, termStartedAt: Date) => {
    const at = now();
    for (const names of index.values()) {
      for (const release of names.values()) {
        const key = keyOfRelease(release);
        for (const loop of dueLoops(release, at, lastSent.get(releaseId(key)), termStartedAt)) send(sender, loop, key, `timer: ${loop} interval`);
      }
    }
  };

  const informerHooks = (informer: string) => ({
    onConnect: () => metrics.informerConnects.inc({ informer }),
    onError: () => metrics.informerErrors.inc({ informer }),
    onRestart: () => metrics.informerRestarts.inc({ informer }),
    onRelist: () => metrics.informerRelists.inc({ informer }),
  });

  const informerFor = (
    name: string,
    path: string,
    list: ListFunction<Watched>,
    transform: (object: Watched) => Watched,
    onEvent: (event: InformerEvent<Watched>) => void,
    labelSelector?: string,
    createListWatch?: (list: ListFunction<Watched>, transform: (object: Watched) => Watched) => ListWatchLike<Watched>,
  ) =>
    createResilientInformer<Watched>({
      name,
      path,
      list,
      transform,
      ...(labelSelector === undefined ? {} : { labelSelector }),
      ...(createListWatch === undefined ? {} : { createListWatch }),
      kc,
      onEvent,
      hooks: informerHooks(name),
      logger: log,
      ...(options.informerBackoff === undefined ? {} : { backoff: options.informerBackoff }),
      ...(options.relistIntervalMs === undefined ? {} : { relistIntervalMs: options.relistIntervalMs }),
    });

  /** Every object of a kind, by pages of LIST_PAGE_SIZE, each item transformed as its page arrives. */
  const listCustom =
    (plural: string, transform: (object: Watched) => Watched): ListFunction<Watched> =>
    async () => {
      const items: Watched[] = [];
      let page: KubernetesListObject<Watched>;
      let next: string | undefined;
      do {
        page = (await custom.listClusterCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          plural,
          limit: options.listPageSize ?? LIST_PAGE_SIZE,
          ...(next === undefined ? {} : { _continue: next }),
        })) as KubernetesListObject<Watched>;
        for (const item of page.items) items.push(transform(item));
        // The custom objects API answers raw JSON: the token is `continue` (`_continue` only in
        // client-node's typed models, which this answer does not go through).
        const meta: { continue?: string; _continue?: string } | undefined = page.metadata;
        next = meta?.continue || meta?._continue || undefined;
      } while (next !== undefined);
      // Every page answers at the first page's resourceVersion (one consistent snapshot).
      return { ...page, metadata: { resourceVersion: page.metadata?.resourceVersion }, items };
    };

  const newSender = () =>
    createQueueSender({
      sqs: options.sqs,
      queueUrls: options.queueUrls,
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
    const dependencies = new Map<DependencyKind, ResilientInformer<Watched>>();
    // Each informer keeps only what the relay reads of its objects (watch/slim.ts).
    const releaseSlim = once<Watched>(slimRelease);
    const releaseInformer = informerFor('Release', RELEASE_PATH, listCustom('releases', releaseSlim), releaseSlim, (event) => onReleaseEvent(sender, event));
    for (const { kind, plural } of CUSTOM_DEPENDENCIES) {
      const slim = once<Watched>(slimDependency);
      dependencies.set(
        kind,
        informerFor(kind, `/apis/${API_GROUP}/${API_VERSION}/${plural}`, listCustom(plural, slim), slim, (event) =>
          onDependencyEvent(sender, kind, dependencies, event),
        ),
      );
    }
    // ConfigMaps and Secrets as metadata only: the relay maps them to Releases by name and
    // never needs (or holds) their data.
    const metadataKinds = [['ConfigMap', '/api/v1/configmaps'], ['Secret', '/api/v1/secrets']] as const;
    for (const [kind, path] of metadataKinds.filter(([kind]) => kind !== 'Secret' || options.watchSecrets !== false)) {
      const metadata = metadataOnlyListWatch<Watched>(kc, path, WATCH_LABEL_SELECTOR);
      dependencies.set(
        kind,
        informerFor(kind, path, metadata.list, once<Watched>(slimDependency), (event) => onDependencyEvent(sender, kind, dependencies, event), WATCH_LABEL_SELECTOR, metadata.createListWatch),
      );
    }
    releaseInformer.start();
    for (const informer of dependencies.values()) informer.start();
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
      sweepOrphanLeases().catch((error: unknown) => log.warn('sweeping the Leases of deleted Releases failed', { error: error as Error }));
    };
    const tick =
      options.timers === false
        ? undefined
        : setInterval(() => {
            if (!releaseInformer.hasSynced()) return;
            sweepOnce();
            timersStartedAt ??= now();
            onTick(sender, timersStartedAt);
          }, options.tickMs ?? 1_000);
    term = { sender, releaseInformer, dependencies, tick };
    log.info('relay started sending');
  };

  /** Leases of Releases deleted while no relay led: their delete event was never seen. */
  const sweepOrphanLeases = async () => {
    const live = new Set([...index.values()].flatMap((names) => [...names.values()].map((r) => r.metadata.uid ?? '')));
    for (const uid of orphanLeaseUids(await leases.releaseUids(), live)) await leases.removeAll(uid);
  };

  const endTerm = async (flush: boolean) => {
    const ending = term;
    if (ending === undefined) return;
    term = undefined;
    clearInterval(ending.tick);
    await Promise.all([ending.releaseInformer.stop(), ...[...ending.dependencies.values()].map((i) => i.stop())]);
    await ending.sender.stop({ flush });
    index.clear();
    lastSent.clear();
    metrics.releases.set(0);
    metrics.leader.set(0);
    log.info(flush ? 'relay stopped sending' : 'relay lost leadership; stopped sending');
  };

  const transition = (work: () => void | Promise<void>) => {
    transitions = transitions.then(work).catch((error: unknown) => log.error('relay leadership transition failed', { error }));
  };

  const elector = startLeaderElection({
    kc,
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
      return current !== undefined && current.releaseInformer.hasSynced() && [...current.dependencies.values()].every((i) => i.hasSynced());
    },
    leading: () => elector.isLeader() && term !== undefined,
    enqueue(loop, key, cause) {
      if (stopping) return;
      const current = term;
      if (current !== undefined) {
        send(current.sender, loop, key, cause);
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
