/**
 * How convoy keeps its run state on a coordination.k8s.io/v1 Lease: the annotations (follow-up,
 * failures, handled sentAt, the holders of the last runs), the owner label, the MicroTime stamps,
 * and reading them back as a LeaseRecord. lease.ts is the protocol that changes them, one
 * compare-and-swap at a time; a change of what is kept on the object is made here.
 */
import {
  newerSentAt,
  type BusyLease,
  type FollowUp,
  type HeldLease,
  type LeaseRecord,
} from '../../domain/runtime/lease.ts';

export const FOLLOW_UP_ID = 'convoy.dev/follow-up-message-id';
export const FOLLOW_UP_DUE = 'convoy.dev/follow-up-due-at';
const FAILURES = 'convoy.dev/failures';
const HANDLED_SENT_AT = 'convoy.dev/handled-sent-at';
export const HOLDER_SENT_AT = 'convoy.dev/holder-sent-at';
/** A take copies HOLDER_SENT_AT here first: the sentAt of the run whose status write closed the Lease. */
export const PREVIOUS_SENT_AT = 'convoy.dev/previous-sent-at';
export const FOLLOW_UP_SINCE = 'convoy.dev/follow-up-since';
/** The holder of the last run that gave the Lease back: the next take's holder must differ (AcquireOptions.unique). */
export const LAST_HOLDER = 'convoy.dev/last-holder';
/** Always present, so JSON patches can add single annotations. */
export const FORMAT = 'convoy.dev/lease-format';
export const RELEASE_UID_LABEL = 'convoy.dev/release-uid';
/**
 * The fleet loop's Leases name a ReleaseSet's uid, under their own label: the relay's sweep of
 * Leases whose Release is gone (releaseUids/removeAll) must not take them for orphans.
 */
export const RELEASE_SET_UID_LABEL = 'convoy.dev/release-set-uid';
export const ownerLabelOf = (loop: string) => (loop === 'fleet' ? RELEASE_SET_UID_LABEL : RELEASE_UID_LABEL);

/** A coordination.k8s.io/v1 Lease as JSON (MicroTime fields are strings). */
export interface V1Lease {
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

export const escapeKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The Lease's record; `closedByRun`: taken from a run that closed it by its status write, whose sentAt then counts as handled. */
export function recordOf(lease: V1Lease, closedByRun = false): LeaseRecord {
  const annotations = lease.metadata?.annotations ?? {};
  const id = annotations[FOLLOW_UP_ID];
  const dueAt = annotations[FOLLOW_UP_DUE];
  const since = annotations[FOLLOW_UP_SINCE];
  const failures = Number(annotations[FAILURES] ?? '0');
  const handled = annotations[HANDLED_SENT_AT] || undefined;
  return {
    followUp: id ? { messageId: id, ...(dueAt ? { dueAt } : {}), ...(since ? { since } : {}) } : undefined,
    failures: Number.isInteger(failures) && failures > 0 ? failures : 0,
    handledSentAt: closedByRun ? newerSentAt(handled, annotations[PREVIOUS_SENT_AT] || undefined) : handled,
  };
}

/** A MicroTime unique to one take (random microseconds): renewals and releases test it with the holder. */
export function takeTime(date: Date): string {
  const micro = String(Math.floor(Math.random() * 1000)).padStart(3, '0');
  return date.toISOString().replace(/\.(\d{3})Z$/, `.$1${micro}Z`);
}

/** Whether the Lease is free, or its holder's time (from the last renewal) has run out by `now`. */
export function expired(lease: V1Lease, now: Date): boolean {
  const holder = lease.spec?.holderIdentity;
  if (!holder) return true;
  const renewed = lease.spec?.renewTime ?? lease.spec?.acquireTime;
  const duration = lease.spec?.leaseDurationSeconds ?? 0;
  return renewed === undefined || new Date(renewed).getTime() + duration * 1000 < now.getTime();
}

/** A Lease another run holds, as the port reports it. */
export function busyOf(current: V1Lease): BusyLease {
  return {
    kind: 'busy',
    holder: current.spec?.holderIdentity ?? '',
    holderSentAt: current.metadata?.annotations?.[HOLDER_SENT_AT] || undefined,
    followUpId: current.metadata?.annotations?.[FOLLOW_UP_ID] || undefined,
    renewedAt: current.spec?.renewTime ?? current.spec?.acquireTime,
    durationSeconds: current.spec?.leaseDurationSeconds,
  };
}

/** The follow-up's annotations of a Lease created held (a Release's first run). */
export function followUpAnnotations(first: FollowUp | undefined): Record<string, string> {
  return first
    ? {
        [FOLLOW_UP_ID]: first.messageId,
        ...(first.dueAt ? { [FOLLOW_UP_DUE]: first.dueAt } : {}),
        ...(first.since ? { [FOLLOW_UP_SINCE]: first.since } : {}),
      }
    : {};
}

/**
 * The annotations of a Lease given back by `lease`'s run: its follow-up (or none), failures and
 * handled sentAt; the holder remembered as the last one, the take's own sentAt cleared.
 */
export function releasedAnnotations(
  held: V1Lease,
  lease: HeldLease,
  followUp: FollowUp | undefined,
  record: Partial<Omit<LeaseRecord, 'followUp'>>,
): Record<string, string> {
  const annotations: Record<string, string> = {
    ...(held.metadata?.annotations ?? {}),
    [FORMAT]: '2',
    [HOLDER_SENT_AT]: '',
    [LAST_HOLDER]: lease.holder,
  };
  delete annotations[FOLLOW_UP_ID];
  delete annotations[FOLLOW_UP_DUE];
  delete annotations[FOLLOW_UP_SINCE];
  delete annotations[PREVIOUS_SENT_AT];
  if (followUp) {
    annotations[FOLLOW_UP_ID] = followUp.messageId;
    if (followUp.dueAt) annotations[FOLLOW_UP_DUE] = followUp.dueAt;
    if (followUp.since) annotations[FOLLOW_UP_SINCE] = followUp.since;
  }
  const failures = record.failures ?? lease.failures;
  if (failures > 0) annotations[FAILURES] = String(failures);
  else delete annotations[FAILURES];
  const handled = record.handledSentAt ?? lease.handledSentAt;
  if (handled !== undefined) annotations[HANDLED_SENT_AT] = handled;
  return annotations;
}
