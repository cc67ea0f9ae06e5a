/**
 * A Lease closed by the run's own status write (docs/decisions.md "Leases closed by
 * the status write"): taking a Lease costs one request, and in the common case giving it back
 * costs none.
 *
 * Every loop writes a time into its status slice on (nearly) every status write: the reconcile
 * `status.reconciledAt`, health `status.healthSummary.checkedAt`, drift the InSync condition's
 * `lastTransitionTime` (it changes only on a transition). A run takes the Lease with the holder
 * `<loop>@<T>`, where T is the time its status write will carry (its *mark*: whole seconds, as
 * status times are, strictly after the mark the run found). The Lease is free when its holder is
 * "" or `<loop>@<the mark the Release's status carries now>`: so the moment the run's status
 * write lands, the Lease is free for the next run — which read that status, and takes the Lease
 * by one compare-and-swap on exactly that value. A run still going has not written T yet, so its
 * Lease stays busy; a crashed one expires as before.
 *
 * A run gives the Lease back explicitly (one request, holder `<loop>@<mark now in status>`)
 * whenever its status write cannot close it: no status write (a drop, a suspended Release, the
 * Progressing recheck), a write with no new mark, work after the write (the write then carries
 * T + 1 s, so it closes nothing), or what the next run needs recorded in the Lease: failures to
 * count or reset, a follow-up that is not this run's own message.
 */
import type { Loop, QueueLoop } from './queue-message.ts';
import type { AcquireOptions, LeaseRecord } from './lease.ts';
import type { Outcome } from './outcome.ts';

/** The parts of a Release status the marks live in. */
export interface MarkedStatus {
  reconciledAt?: string | undefined;
  healthSummary?: { checkedAt?: string | undefined } | undefined;
  conditions?: readonly { type: string; lastTransitionTime?: string | undefined }[] | undefined;
}

/** The mark of `loop`'s last status write; undefined when it never wrote one. */
export function statusMark(loop: Loop, status: MarkedStatus | undefined): string | undefined {
  if (status === undefined) return undefined;
  const conditions: readonly { type: string; lastTransitionTime?: string | undefined }[] = Array.isArray(
    status.conditions,
  )
    ? status.conditions
    : [];
  const value: unknown =
    loop === 'reconcile'
      ? status.reconciledAt
      : loop === 'health'
        ? status.healthSummary?.checkedAt
        : conditions.find((c) => c.type === 'InSync')?.lastTransitionTime;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The holder value that means "free" while the status carries `mark`. */
export function closedHolder(loop: QueueLoop, mark: string | undefined): string {
  return mark === undefined ? '' : `${loop}@${mark}`;
}

/** The mark a holder value `<loop>@<mark>` names; undefined for any other value ("", a random holder). */
export function markOfHolder(loop: QueueLoop, holder: string): string | undefined {
  const prefix = `${loop}@`;
  return holder.startsWith(prefix) && holder.length > prefix.length ? holder.slice(prefix.length) : undefined;
}

const wholeSeconds = (ms: number): string =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** The mark of a run starting at `now`: whole seconds, strictly after the mark it found (a burst runs at most seconds ahead). */
export function nextMark(found: string | undefined, now: Date): string {
  const previous = found === undefined ? Number.NaN : Date.parse(found);
  const at = Number.isNaN(previous)
    ? now.getTime()
    : Math.max(now.getTime(), Math.floor(previous / 1000) * 1000 + 1000);
  return wholeSeconds(at);
}

/**
 * The holder a take carries instead of `planned` when a holder that already ran on the Lease
 * (`earlier`: the last one given back, or a crashed one taken over) has a mark no earlier than
 * `planned`'s: a run that gives the Lease back without a status write leaves the free value
 * unchanged, so the next run in the same second would compute the same holder. Strictly after
 * `earlier`, so holder ids never repeat for the life of a Lease. undefined: `planned` is fine.
 */
export function holderAfterEarlier(
  loop: QueueLoop,
  planned: string,
  earlier: string,
  now: Date,
): string | undefined {
  const earlierMark = markOfHolder(loop, earlier);
  const plannedMark = markOfHolder(loop, planned);
  if (earlierMark === undefined || plannedMark === undefined) return undefined;
  const earlierAt = Date.parse(earlierMark);
  if (Number.isNaN(earlierAt) || Date.parse(plannedMark) > earlierAt) return undefined;
  return `${loop}@${nextMark(earlierMark, now)}`;
}

/**
 * How a run of a loop whose status write closes its Lease takes it (lease.ts AcquireOptions), given
 * the mark its view of the Release's status carries (`found`): the value that means free in that
 * view, the holder to take it with when a run closed it since, and the holder that never repeats
 * one already used. The Lease port applies them on its compare-and-swaps (adapters/kube/lease.ts).
 */
export function markedTake(
  loop: QueueLoop,
  found: string | undefined,
  now: () => Date,
): Required<Pick<AcquireOptions, 'closedAs' | 'holderAfter' | 'unique'>> {
  return {
    closedAs: closedHolder(loop, found),
    // Closed by a run since our read: our mark must be after the one it wrote, or our holder
    // could equal the value that means free (and a third run take it meanwhile).
    holderAfter: (free) => `${loop}@${nextMark(markOfHolder(loop, free) ?? found, now())}`,
    // A run that gave the Lease back without a status write left the free value as it was: the
    // next run's holder must still differ from that run's (holder ids never repeat).
    unique: (planned, earlier) => holderAfterEarlier(loop, planned, earlier, now()),
  };
}

/** The mark a run with work after its status write carries instead: it must not close the Lease yet. */
export function markAfter(mark: string): string {
  return wholeSeconds(Date.parse(mark) + 1000);
}

/**
 * Whether the status write alone may end the run: nothing the Lease records has to change.
 * done/stop need no failures to reset and no scheduled follow-up to clear (only the one a first
 * run recorded for itself, which supersedes nothing sent after it started); a recheck
 * (requeueAfter: the same message comes back) needs the Lease to name this message already.
 */
export function closesByStatus(outcome: Outcome, lease: LeaseRecord, messageId: string): boolean {
  if (lease.failures > 0) return false;
  const followUp = lease.followUp;
  if (outcome.kind === 'done' || outcome.kind === 'stop')
    return followUp === undefined || (followUp.messageId === messageId && followUp.since !== undefined);
  if (outcome.kind === 'requeueAfter' && outcome.asNewMessage !== true)
    return lease.followUp?.messageId === messageId;
  return false;
}
