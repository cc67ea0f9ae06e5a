/**
 * One run of the notify loop (docs/notifications.md): its message names a Release (or a
 * ReleaseSet) whose notify state may differ from what a Notification of its namespace recorded.
 * For each Notification that watches it:
 * 1. record the state, its transition pending, and claim the owed destinations — one status
 *    write with a resourceVersion precondition, before anything is sent;
 * 2. deliver each claimed destination's owed transitions in order (credentials read as the
 *    object's identity), stopping at its first failure;
 * 3. record what each destination took, retry or give up — a second write.
 * A duplicate message finds nothing changed and nothing owed: no write, no send.
 *
 * Unlike the Release loops this run writes another object's status (the Notification's) around
 * its sends, twice, each time from a fresh read: a RunDecision (one write and effects around it)
 * cannot say that, so the handler writes through the NotificationStore itself.
 */
import type { DataReaderFor } from '../../adapters/kube/identity-reads.ts';
import type { EventRecorder } from '../../adapters/kube/events.ts';
import type { NotificationStore } from '../../adapters/kube/notification-store.ts';
import type { ReleaseSource } from '../../adapters/kube/release-source.ts';
import { parseRelease, type Release } from '../../domain/api/objects.ts';
import type { Notification } from '../../domain/api/notification.ts';
import { withDelivering } from '../../domain/notify/condition.ts';
import type { Deliver } from '../../domain/notify/event.ts';
import { eventOf } from '../../domain/notify/event-of.ts';
import {
  claim,
  observe,
  owed,
  recordOf,
  selects,
  settle,
  type DestinationResult,
  type WatchedObject,
} from '../../domain/notify/records.ts';
import { releaseNotifyState, type NotifyState } from '../../domain/notify/state.ts';
import { done, dropped, requeueAfter, type Outcome } from '../../domain/runtime/outcome.ts';
import { inClusterIdentity, type TenancySettings } from '../../domain/tenancy/index.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RecordHandler } from '../runtime/sqs-batch-handler.ts';
import { resolveDestination } from './destinations.ts';

export interface NotifyDeps {
  readonly notifications: NotificationStore;
  readonly releases: ReleaseSource;
  /** Secrets read as an identity (the Release's ServiceAccount). */
  readonly secretsAs: DataReaderFor;
  readonly tenancy: Pick<TenancySettings, 'defaultServiceAccount'>;
  readonly deliver: Deliver;
  readonly events?: EventRecorder | undefined;
  readonly now?: (() => Date) | undefined;
  /** The installation's dashboard (events link to the object's page). */
  readonly dashboardUrl?: string | undefined;
  /** The installation's EventBridge bus. */
  readonly eventBus?: string | undefined;
}

interface Subject {
  readonly namespace: string;
  readonly object: WatchedObject;
  readonly state: NotifyState;
  readonly release: Release;
}

/** The notify loop's record handler. */
export function createNotifyRun(deps: NotifyDeps): RecordHandler {
  const now = deps.now ?? (() => new Date());
  return async (message, ctx) => {
    if (message.kind === 'ReleaseSet') return dropped('ReleaseSet transitions are not sent yet');
    const raw = await deps.releases.get(message.namespace, message.name);
    if (raw === undefined) return dropped('the Release no longer exists', { gone: true });
    const parsed = parseRelease(raw);
    if (!parsed.ok) return dropped(`the Release does not parse: ${parsed.error}`);
    const release = parsed.value;
    if (release.metadata.uid !== message.uid) return dropped('the Release was replaced (its uid differs)');
    const subject: Subject = {
      namespace: message.namespace,
      object: {
        kind: 'Release',
        name: release.metadata.name,
        uid: message.uid,
        labels: release.metadata.labels,
      },
      state: releaseNotifyState(release),
      release,
    };
    const watching = (await deps.notifications.list(message.namespace)).filter((n) =>
      selects(n.spec, subject.object),
    );
    let outcome: Outcome = done();
    for (const notification of watching) {
      const one = await notifyOne(deps, now, notification.metadata.name, subject, ctx.logger);
      if (one !== undefined)
        ctx.logger.info('notify run', { notification: notification.metadata.name, outcome: one.kind });
      outcome = worse(outcome, one ?? done());
    }
    return outcome;
  };
}

const RANK: Readonly<Record<Outcome['kind'], number>> = {
  done: 0,
  dropped: 0,
  stop: 1,
  requeueAfter: 2,
  retry: 3,
};
const worse = (a: Outcome, b: Outcome): Outcome => (RANK[b.kind] > RANK[a.kind] ? b : a);

const stampOf = (n: Notification, at: Date) => ({ generation: n.metadata.generation ?? 0, now: at });

/** Steps 1–3 for one Notification; undefined: nothing to do (nothing changed, nothing owed). */
async function notifyOne(
  deps: NotifyDeps,
  now: () => Date,
  name: string,
  subject: Subject,
  logger: Logger,
): Promise<Outcome | undefined> {
  const uid = subject.object.uid;
  const first = await deps.notifications.update(subject.namespace, name, (current) => {
    const at = now();
    const observed = observe(current.spec, current.status, subject.object, subject.state, at);
    const claimed = claim(current.spec, observed.status, uid, at);
    const changed = observed.changed || claimed.destinations.length > 0;
    return {
      status: changed ? withDelivering(claimed.status, stampOf(current, at)) : undefined,
      result: claimed,
    };
  });
  if (first === undefined) return undefined;
  const { result: claimed, notification } = first;
  if (claimed.destinations.length === 0) {
    if (claimed.busyUntil === undefined) return undefined;
    return requeueAfter(
      Math.max(1000, claimed.busyUntil.getTime() - now().getTime()),
      'another run is delivering',
    );
  }
  const record = recordOf(claimed.status, uid)!;
  const results = await Promise.all(
    claimed.destinations.map((to) => deliverOwed(deps, notification, subject, record, to)),
  );
  const second = await deps.notifications.update(subject.namespace, name, (current) => {
    const settled = settle(current.status ?? {}, uid, results, now());
    return { status: withDelivering(settled.status, stampOf(current, now())), result: settled };
  });
  if (second === undefined) return undefined;
  const settled = second.result;
  if (settled.gaveUp.length > 0) {
    const failed = await reportGivenUp(deps, second.notification, settled.gaveUp);
    for (const error of failed)
      logger.warn('an Event about a given-up transition could not be written', { error: error.message });
  }
  if (settled.retry !== undefined)
    return { kind: 'retry', error: new Error(settled.retry.reason), attempt: settled.retry.attempt };
  const after = recordOf(settled.status, uid);
  const stillOwed = after?.deliveries?.some((d) => owed(after, d).length > 0) === true;
  return stillOwed && second.notification.spec.suspend !== true
    ? requeueAfter(1000, 'transitions still owed after one was given up')
    : done();
}

/** Delivers destination `to`'s owed transitions in order; stops at the first failure. */
async function deliverOwed(
  deps: NotifyDeps,
  notification: Notification,
  subject: Subject,
  record: NonNullable<ReturnType<typeof recordOf>>,
  to: number,
): Promise<DestinationResult> {
  const delivery = record.deliveries?.find((d) => d.to === to);
  const spec = notification.spec.to[to];
  if (delivery === undefined || spec === undefined) return { to };
  const resolved = await resolveDestination(spec, {
    namespace: subject.namespace,
    secrets: deps.secretsAs(inClusterIdentity(subject.release, deps.tenancy)),
    eventBus: deps.eventBus,
    sourceUrl: subject.release.status?.lastAttempted?.resolvedSource?.git?.url,
  });
  if (!resolved.ok) return { to, failure: { retryable: resolved.retryable, reason: resolved.reason } };
  let sentThrough: number | undefined;
  for (const pending of owed(record, delivery)) {
    const event = eventOf(subject.namespace, subject.object, pending, deps.dashboardUrl);
    const answer = await deps.deliver(resolved.destination, event);
    if (!answer.ok)
      return { to, sentThrough, failure: { retryable: answer.retryable, reason: answer.reason } };
    sentThrough = pending.sequence;
  }
  return { to, sentThrough };
}

async function reportGivenUp(
  deps: NotifyDeps,
  notification: Notification,
  gaveUp: readonly string[],
): Promise<Error[]> {
  if (deps.events === undefined) return [];
  return deps.events.record(
    {
      kind: 'Notification',
      namespace: notification.metadata.namespace ?? '',
      name: notification.metadata.name,
      uid: notification.metadata.uid,
    },
    gaveUp.map((what) => ({
      type: 'Warning',
      reason: 'DestinationFailing',
      action: 'Notify',
      note: `gave up a transition: ${what}`,
    })),
  );
}
