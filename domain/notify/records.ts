/**
 * The bookkeeping that makes a notification exactly once (docs/notifications.md, "Exactly
 * once"). Pure: every function takes a Notification's status and returns the next one; the
 * notify loop (functions/notify/) writes it with a resourceVersion precondition, so two runs
 * never both win.
 *
 * Per watched object the status keeps its last state, a sequence number per transition, the
 * transitions still owed (pending) and per destination the last sequence it was sent. A run:
 * 1. `observe`: records a new state, and its transition as pending (written before any send,
 *    so a crash after it never skips the transition);
 * 2. `claim`: marks the destinations it will deliver to as claimed for a while (written with
 *    1), so a concurrent run leaves them alone; a crashed run's claim expires;
 * 3. `settle`: records each destination's result: sent (its sequence), a failure to retry, or a
 *    transition given up (after MAX_DELIVERY_ATTEMPTS or MAX_DELIVERY_AGE_MS, or at once when
 *    the failure cannot be retried), so later transitions still go.
 * A crash between a destination's answer and 3 resends the same event id (receivers dedupe).
 */
import {
  MAX_NOTIFIED_OBJECTS,
  MAX_PENDING_TRANSITIONS,
  type DeliveryRecord,
  type NotificationSpec,
  type NotificationStatus,
  type NotifiedObject,
  type PendingTransition,
} from '../api/notification.ts';
import { matchesSelector } from '../fleet/selector.ts';
import { isNotifyKind, recordedAfter, transitionOf, type NotifyState, type RecordedState } from './state.ts';

/** Attempts at one transition before a destination gives it up; under the queues' maxReceiveCount. */
export const MAX_DELIVERY_ATTEMPTS = 10;
/** Age of a destination's first failure at one transition after which it is given up. */
export const MAX_DELIVERY_AGE_MS = 30 * 60_000;
/** How long a run's claim on a destination holds: longer than its deliveries can take. */
export const CLAIM_MS = 90_000;

export interface WatchedObject {
  readonly kind: 'Release' | 'ReleaseSet';
  readonly name: string;
  readonly uid: string;
  readonly labels?: Readonly<Record<string, string>> | undefined;
}

/** Whether the Notification watches `object` (spec.for: by name or by label selector). */
export function selects(spec: Pick<NotificationSpec, 'for'>, object: WatchedObject): boolean {
  return spec.for.some(
    (entry) =>
      entry.kind === object.kind &&
      (entry.name !== undefined
        ? entry.name === object.name
        : entry.selector !== undefined && matchesSelector(entry.selector, object.labels ?? {})),
  );
}

export function recordOf(status: NotificationStatus | undefined, uid: string): NotifiedObject | undefined {
  return status?.objects?.find((o) => o.uid === uid);
}

export function recordedState(record: NotifiedObject | undefined): RecordedState | undefined {
  if (record === undefined || !isNotifyKind(record.state)) return undefined;
  return { kind: record.state, failing: record.failing === true };
}

/** Whether the record is behind `state`: what the relay asks before it sends a notify message. */
export function isBehind(record: NotifiedObject | undefined, state: NotifyState): boolean {
  if (record === undefined) return transitionOf(undefined, state.kind) !== undefined;
  return record.state !== state.kind;
}

/**
 * Whether the relay sends a notify message for a Release event, given the Notification's record
 * of it: a record behind the state, or — no record — a change of state this watch event saw
 * (never the first list: a restart must not notify every object never recorded).
 */
export function dueOnEvent(
  record: NotifiedObject | undefined,
  state: NotifyState,
  event: { readonly initial: boolean; readonly previousKind: NotifyState['kind'] | undefined },
): boolean {
  if (record !== undefined) return isBehind(record, state);
  return (
    !event.initial &&
    event.previousKind !== undefined &&
    event.previousKind !== state.kind &&
    isBehind(undefined, state)
  );
}

/** Whether any destination still owes a transition of the record (the relay re-sends those after a restart). */
export function owesAny(record: NotifiedObject): boolean {
  return (record.deliveries ?? []).some((d) => owed(record, d).length > 0);
}

const destinationType = (spec: NotificationSpec, index: number): string => {
  const to = spec.to[index];
  if (to === undefined) return 'unknown';
  return to.eventBridge ? 'eventBridge' : to.webhook ? 'webhook' : to.slack ? 'slack' : 'commitStatus';
};

/**
 * One delivery record per spec.to entry, matched by index and type. A destination new to the
 * record (added to spec.to, or its type changed at that index) owes nothing before `sequence`.
 */
function deliveriesFor(spec: NotificationSpec, record: NotifiedObject | undefined, sequence: number) {
  return spec.to.map((_, index): DeliveryRecord => {
    const type = destinationType(spec, index);
    const found = record?.deliveries?.find((d) => d.to === index && d.type === type);
    return found ?? { to: index, type, sentSequence: sequence, attempts: 0 };
  });
}

/** The status with `record` first (most recent first) and at most MAX_NOTIFIED_OBJECTS records. */
function withRecord(status: NotificationStatus | undefined, record: NotifiedObject): NotificationStatus {
  const others = (status?.objects ?? []).filter((o) => o.uid !== record.uid);
  return { ...status, objects: [record, ...others].slice(0, MAX_NOTIFIED_OBJECTS) };
}

export interface Observed {
  readonly status: NotificationStatus;
  readonly record: NotifiedObject | undefined;
  /** The status differs from the one given: it must be written before any send. */
  readonly changed: boolean;
}

/**
 * Records `state` for `object`. A change of state is recorded with its transition (if any)
 * pending when spec.transitions names it; a wait of an object never recorded is not recorded (it tells
 * nothing and costs a write). Pending transitions beyond MAX_PENDING_TRANSITIONS give up the
 * oldest for every destination that still owed it (counted in gaveUp).
 */
export function observe(
  spec: NotificationSpec,
  status: NotificationStatus | undefined,
  object: WatchedObject,
  state: NotifyState,
  now: Date,
): Observed {
  const found = recordOf(status, object.uid);
  const previous = recordedState(found);
  const transition = transitionOf(previous, state.kind);
  if (previous?.kind === state.kind || (found === undefined && transition === undefined)) {
    const deliveries = deliveriesFor(spec, found, found?.sequence ?? 0);
    if (found === undefined || sameDeliveries(found.deliveries, deliveries))
      return { status: status ?? {}, record: found, changed: false };
    const record = { ...found, deliveries };
    return { status: replaceRecord(status, record), record, changed: true };
  }
  const told = transition !== undefined && spec.transitions.includes(transition);
  const before = found?.sequence ?? 0;
  const sequence = told ? before + 1 : before;
  const recorded = recordedAfter(previous, state.kind);
  const entry: PendingTransition | undefined = told
    ? pendingEntry(sequence, transition, state, found, now)
    : undefined;
  let pending = [...(found?.pending ?? []), ...(entry ? [entry] : [])];
  let deliveries = deliveriesFor(spec, found, before);
  while (pending.length > MAX_PENDING_TRANSITIONS) {
    const dropped = pending[0].sequence;
    pending = pending.slice(1);
    deliveries = deliveries.map((d) => (d.sentSequence < dropped ? { ...giveUp(d, dropped) } : d));
  }
  const record: NotifiedObject = {
    kind: object.kind,
    name: object.name,
    uid: object.uid,
    state: recorded.kind,
    ...(recorded.failing ? { failing: true } : {}),
    sequence,
    changedAt: now.toISOString(),
    ...(pending.length > 0 ? { pending } : {}),
    deliveries,
  };
  return { status: withRecord(status, record), record, changed: true };
}

function pendingEntry(
  sequence: number,
  transition: PendingTransition['transition'],
  state: NotifyState,
  found: NotifiedObject | undefined,
  now: Date,
): PendingTransition {
  const defined = <T extends object>(o: T): T =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
  return defined({
    sequence,
    transition,
    verdict: defined({
      kind: state.kind,
      signal: state.signal,
      reason: state.reason,
      message: state.message,
    }),
    previous: found === undefined ? undefined : { kind: found.state },
    renderRef: state.renderRef,
    revision: state.revision,
    repository: state.repository,
    cluster: state.cluster,
    occurredAt: now.toISOString(),
  });
}

function replaceRecord(status: NotificationStatus | undefined, record: NotifiedObject): NotificationStatus {
  return { ...status, objects: (status?.objects ?? []).map((o) => (o.uid === record.uid ? record : o)) };
}

function sameDeliveries(a: readonly DeliveryRecord[] | undefined, b: readonly DeliveryRecord[]): boolean {
  return JSON.stringify(a ?? []) === JSON.stringify(b);
}

function giveUp(d: DeliveryRecord, sequence: number): DeliveryRecord {
  const { claimedUntil: _claim, firstFailedAt: _first, ...rest } = d;
  return { ...rest, sentSequence: sequence, attempts: 0, gaveUp: (d.gaveUp ?? 0) + 1 };
}

/** A destination's owed transitions, in order. */
export function owed(record: NotifiedObject, delivery: DeliveryRecord): PendingTransition[] {
  return (record.pending ?? []).filter((p) => p.sequence > delivery.sentSequence);
}

export interface Claimed {
  readonly status: NotificationStatus;
  /** The spec.to indexes this run delivers to. */
  readonly destinations: readonly number[];
  /** The earliest time another run's claim ends, when one holds a destination that is owed. */
  readonly busyUntil?: Date | undefined;
}

/** Claims every owed destination no live claim holds (none while spec.suspend). */
export function claim(spec: NotificationSpec, status: NotificationStatus, uid: string, now: Date): Claimed {
  const record = recordOf(status, uid);
  if (record === undefined || spec.suspend === true) return { status, destinations: [] };
  const destinations: number[] = [];
  let busyUntil: Date | undefined;
  const until = new Date(now.getTime() + CLAIM_MS).toISOString();
  const deliveries = (record.deliveries ?? []).map((d) => {
    if (owed(record, d).length === 0) return d;
    if (d.claimedUntil !== undefined && Date.parse(d.claimedUntil) > now.getTime()) {
      const ends = new Date(d.claimedUntil);
      if (busyUntil === undefined || ends < busyUntil) busyUntil = ends;
      return d;
    }
    destinations.push(d.to);
    return { ...d, claimedUntil: until };
  });
  if (destinations.length === 0) return { status, destinations, busyUntil };
  return { status: replaceRecord(status, { ...record, deliveries }), destinations, busyUntil };
}

/** What one destination's deliveries in a run came to. */
export interface DestinationResult {
  readonly to: number;
  /** The last sequence delivered in this run; undefined: none. */
  readonly sentThrough?: number | undefined;
  /** The failure at the next owed sequence; undefined: everything owed was delivered. */
  readonly failure?: { readonly retryable: boolean; readonly reason: string } | undefined;
}

export interface Settled {
  readonly status: NotificationStatus;
  /** Destinations whose failure gave a transition up in this run: `spec.to[i] (type): reason`. */
  readonly gaveUp: readonly string[];
  /** A failure will be retried: the message comes back after a backoff. */
  readonly retry?: { readonly reason: string; readonly attempt: number } | undefined;
}

/** Records the results of a run's deliveries and releases its claims; prunes what every destination was sent. */
export function settle(
  status: NotificationStatus,
  uid: string,
  results: readonly DestinationResult[],
  now: Date,
): Settled {
  const record = recordOf(status, uid);
  if (record === undefined) return { status, gaveUp: [] };
  const gaveUp: string[] = [];
  let retry: Settled['retry'];
  const deliveries = (record.deliveries ?? []).map((d) => {
    const result = results.find((r) => r.to === d.to);
    if (result === undefined) return d;
    const { claimedUntil: _claim, ...released } = d;
    let next: DeliveryRecord = released;
    if (result.sentThrough !== undefined) {
      const { firstFailedAt: _f, lastError: _e, ...rest } = next;
      next = { ...rest, sentSequence: Math.max(rest.sentSequence, result.sentThrough), attempts: 0 };
    }
    if (result.failure === undefined) return next;
    const head = owed(record, next)[0];
    if (head === undefined) return next;
    const attempts = next.attempts + 1;
    const firstFailedAt = next.firstFailedAt ?? now.toISOString();
    const aged = now.getTime() - Date.parse(firstFailedAt) >= MAX_DELIVERY_AGE_MS;
    const reason = result.failure.reason.slice(0, 900);
    if (!result.failure.retryable || attempts >= MAX_DELIVERY_ATTEMPTS || aged) {
      gaveUp.push(`spec.to[${d.to}] (${d.type}): ${reason}`);
      return {
        ...giveUp(next, head.sequence),
        lastError: `gave up ${head.transition} #${head.sequence}: ${reason}`,
      };
    }
    if (retry === undefined || attempts > retry.attempt)
      retry = { reason: `spec.to[${d.to}] (${d.type}): ${reason}`, attempt: attempts };
    return { ...next, attempts, firstFailedAt, lastError: reason };
  });
  const sentBy = Math.min(...deliveries.map((d) => d.sentSequence), record.sequence);
  const pending = (record.pending ?? []).filter((p) => p.sequence > sentBy);
  const { pending: _p, ...bare } = record;
  const next: NotifiedObject = { ...bare, ...(pending.length > 0 ? { pending } : {}), deliveries };
  return { status: replaceRecord(status, next), gaveUp, retry };
}
