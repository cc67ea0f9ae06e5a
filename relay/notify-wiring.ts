/**
 * The relay's part of notifications (docs/notifications.md, "The relay"): with a notify queue it
 * watches Notifications and sends a notify message for a Release whose notify state differs from
 * what a Notification watching it recorded. It keeps nothing of its own: what was recorded is
 * the Notification's status, so a relay that starts leading (or restarts) derives the same
 * messages from the first lists, and a Release whose record is current sends none — no
 * re-notification storm. A Release never recorded is sent only when a watch event changes its
 * state, never for the first list.
 *
 * Fan-out is bounded: a Release event looks at the Notifications of its namespace; a
 * Notification event at its records (at most MAX_NOTIFIED_OBJECTS). Each send goes through the
 * coalescing sender (send/queue-sender.ts), one message per Release per window.
 */
import { notificationPath } from '../adapters/kube/convoy-paths.ts';
import type { Release } from '../domain/api/objects.ts';
import type { Notification, NotifiedObject } from '../domain/api/notification.ts';
import { dueOnEvent, owesAny, recordOf, selects, type WatchedObject } from '../domain/notify/records.ts';
import { releaseNotifyState, type NotifyKind } from '../domain/notify/state.ts';
import { NOTIFY_LOOP } from '../domain/runtime/queue-message.ts';
import type { Logger } from '../platform/logger.ts';
import type { RelayOptions } from './relay-options.ts';
import type { QueueSender } from './send/queue-sender.ts';
import { pagedList } from './watch/list-watch.ts';
import {
  createResilientInformer,
  type InformerEvent,
  type ResilientInformer,
} from './watch/resilient-informer.ts';
import { LIST_PAGE_SIZE, type Watched } from './watch/informers.ts';
import { once } from './watch/slim.ts';

export interface NotifyWiring {
  /** The sender's notify queue: `{ notify: url }`, or nothing without one. */
  readonly urls: { readonly notify?: string };
  /** Makes and starts this term's Notification informer (nothing without a notify queue). */
  startTerm(sender: QueueSender): void;
  /** Stops this term's informer. */
  endTerm(): Promise<void>;
  /** The informer has listed (true without a notify queue). */
  hasSynced(): boolean;
  /** A Release event (after the relay's index took it). */
  onRelease(
    sender: QueueSender,
    event: InformerEvent<Watched>,
    old: Release | undefined,
    next: Release | undefined,
  ): void;
}

type SlimNotification = Watched & Pick<Notification, 'spec' | 'status'>;

/** What the relay keeps of a Notification: identity, spec.for, and per record its state and what is owed. */
function slimNotification(raw: Watched): Watched {
  const n = raw as unknown as Notification;
  const objects = (n.status?.objects ?? []).map((o): NotifiedObject => ({
    kind: o.kind,
    name: o.name,
    uid: o.uid,
    state: o.state,
    sequence: o.sequence,
    changedAt: o.changedAt,
    ...(o.pending === undefined
      ? {}
      : { pending: o.pending.map((p) => ({ ...p, verdict: { kind: p.verdict.kind } })) }),
    deliveries: (o.deliveries ?? []).map((d) => ({
      to: d.to,
      type: d.type,
      sentSequence: d.sentSequence,
      attempts: 0,
    })),
  }));
  const { name, namespace, uid, resourceVersion, generation } = n.metadata;
  return {
    metadata: { name, namespace, uid, resourceVersion, generation },
    spec: { for: n.spec?.for ?? [], transitions: [], to: [] },
    status: { objects },
  } as unknown as Watched;
}

const kindOf = (release: Release | undefined): NotifyKind | undefined =>
  release === undefined ? undefined : releaseNotifyState(release).kind;

const watchedOf = (release: Release): WatchedObject => ({
  kind: 'Release',
  name: release.metadata.name,
  uid: release.metadata.uid ?? '',
  labels: release.metadata.labels,
});

/** `releaseOf`: the relay's index of Releases. Without options.notifyQueueUrl it does nothing. */
export function createNotifyWiring(
  options: Pick<
    RelayOptions,
    'notifyQueueUrl' | 'kube' | 'listPageSize' | 'relistIntervalMs' | 'informerBackoff'
  >,
  log: Logger,
  releaseOf: (namespace: string, name: string) => Release | undefined,
): NotifyWiring {
  let informer: ResilientInformer<Watched> | undefined;

  const send = (sender: QueueSender, release: Release, cause: string) => {
    const uid = release.metadata.uid ?? '';
    if (uid === '') return;
    sender.enqueue(
      NOTIFY_LOOP,
      { namespace: release.metadata.namespace ?? '', name: release.metadata.name, uid },
      cause,
    );
  };

  /** A Notification listed or changed: each record behind its Release's state (or owing a send after a restart). */
  const onNotification = (sender: QueueSender, event: InformerEvent<Watched>) => {
    if (event.type === 'deleted') return;
    const notification = event.object as SlimNotification;
    const namespace = notification.metadata?.namespace ?? '';
    for (const record of notification.status?.objects ?? []) {
      if (record.kind !== 'Release') continue;
      const release = releaseOf(namespace, record.name);
      if (release === undefined || release.metadata.uid !== record.uid) continue;
      if (record.state !== kindOf(release)) {
        send(
          sender,
          release,
          `watch: Notification ${notification.metadata?.name ?? ''} records ${record.state}`,
        );
        continue;
      }
      // After a restart, a transition still owed (its retries may have run out with no relay leading).
      if (event.initial && owesAny(record))
        send(sender, release, `watch: Notification ${notification.metadata?.name ?? ''} owes a transition`);
    }
  };

  return {
    urls: options.notifyQueueUrl === undefined ? {} : { notify: options.notifyQueueUrl },
    async endTerm() {
      const ending = informer;
      informer = undefined;
      await ending?.stop();
    },
    hasSynced: () => informer?.hasSynced() ?? true,
    startTerm(sender) {
      if (options.notifyQueueUrl === undefined) return;
      const slim = once<Watched>(slimNotification);
      const path = notificationPath();
      informer = createResilientInformer<Watched>({
        name: 'Notification',
        path,
        list: pagedList(options.kube, path, slim, { pageSize: options.listPageSize ?? LIST_PAGE_SIZE }),
        transform: slim,
        kube: options.kube,
        onEvent: (event) => onNotification(sender, event),
        logger: log,
        ...(options.informerBackoff === undefined ? {} : { backoff: options.informerBackoff }),
        ...(options.relistIntervalMs === undefined ? {} : { relistIntervalMs: options.relistIntervalMs }),
      });
      informer.start();
    },
    onRelease(sender, event, old, next) {
      if (informer === undefined || next === undefined) return;
      const namespace = next.metadata.namespace ?? '';
      const watching = informer.list(namespace) as SlimNotification[];
      if (watching.length === 0) return;
      const state = releaseNotifyState(next);
      const object = watchedOf(next);
      const previousKind = kindOf(old);
      for (const notification of watching) {
        if (!selects(notification.spec, object)) continue;
        const record = recordOf(notification.status, object.uid);
        const due = dueOnEvent(record, state, { initial: event.initial, previousKind });
        if (due) {
          send(sender, next, `watch: Release is ${state.kind}`);
          return;
        }
      }
    },
  };
}
