import { randomUUID } from 'node:crypto';
import {
  busyWaitMs,
  heartbeatMs,
  holderAlive,
  isCovered,
  isLikelyFirstRun,
  isSuperseded,
  isTickDuringBackoff,
  newerSentAt,
  type BusyLease,
  type FollowUp,
  type HeldLease,
  type LeasePort,
  type LeaseRecord,
} from '../../domain/runtime/lease.ts';
import {
  closedHolder,
  closesByStatus,
  markedTake,
  markOfHolder,
  nextMark,
} from '../../domain/runtime/lease-close.ts';
import { retryDelaySeconds } from '../../domain/runtime/backoff.ts';
import { dropped, waitAsNewMessage, type Outcome } from '../../domain/runtime/outcome.ts';
import { chainIdOf, type QueueLoop, type QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { Logger } from '../../platform/logger.ts';
import type { LeaseMarks } from './release-reads.ts';
import { commitRun, type CommitPorts, type DecisionHandler, type RunLease } from './run-commit.ts';
import type { RecordContext, RecordHandler } from './sqs-batch-handler.ts';

export interface LeaseGuardOptions<S = unknown> {
  loop: QueueLoop;
  leases: LeasePort;
  /** The Lease duration (short: see leaseSeconds); a live run renews it every quarter of it. */
  durationSeconds: number;
  random?: () => number;
  now?: () => Date;
  /**
   * The loop's status marks (functions/runtime/release-reads.ts). Set: the run's status write
   * closes its Lease (domain/runtime/lease-close.ts). Unset: every run gives it back as "".
   */
  marks?: LeaseMarks | undefined;
  /**
   * What the handler's decisions are committed through (run-commit.ts): its status write and
   * effects. Unset: the handler returns bare Outcomes (nothing to write).
   */
  commit?: CommitPorts<S> | undefined;
}

/**
 * Wraps a record handler so that one run per Release and loop happens at a
 * time (docs/decisions.md, "Leases"):
 * - a busy Lease: a copy of the message the holder runs (sent no later) is
 *   dropped; any other message waits as a new delayed message (no receive
 *   spent), 1–3 s while the holder renews, until expiry when it stopped;
 * - a free Lease: a redelivery superseded by a newer follow-up, a message
 *   covered by a finished run, and an interval tick while a retry is
 *   scheduled are dropped; anything else runs, with a heartbeat renewing the
 *   Lease, and a retry's backoff counts the failures recorded in the Lease.
 * The handler reads and decides; its decision is committed under the Lease (run-commit.ts), which
 * tells the guard what the status carries after the write: whether that write closed the Lease
 * (domain/runtime/lease-close.ts) or the guard gives it back.
 */
export function withLease<S>(handler: DecisionHandler<S>, options: LeaseGuardOptions<S>): RecordHandler {
  const random = options.random ?? Math.random;
  const now = options.now ?? (() => new Date());
  return async (message, received) => {
    // A message sent again as a new one (a busy wait, a recheck) is known by its chain's first id:
    // the follow-up a run recorded stays the follow-up through every resend (queue-message.ts followUpOf).
    const ctx: RecordContext = { ...received, messageId: chainIdOf(message, received.messageId) };
    const marks = options.marks;
    const markOf = marks === undefined ? undefined : marks.mark.bind(marks);
    const found = markOf === undefined ? undefined : await markOf(message, ctx, false);
    const firstMark = markOf === undefined ? undefined : nextMark(found, now());
    const holder =
      firstMark === undefined ? `${options.loop}-${randomUUID()}` : `${options.loop}@${firstMark}`;
    const closedAs = closedHolder(options.loop, found);
    const taken = await options.leases.acquire(
      options.loop,
      message.uid,
      holder,
      options.durationSeconds,
      message.sentAt,
      {
        createFirst: ctx.receiveCount === 1 && isLikelyFirstRun(message) && found === undefined,
        ...(markOf === undefined
          ? {}
          : {
              ...markedTake(options.loop, found, now),
              reread: async () => closedHolder(options.loop, await markOf(message, ctx, true)),
              // A first run records itself as the follow-up: its recheck then needs no second write.
              followUpOnCreate: { messageId: ctx.messageId, since: now().toISOString() },
            }),
      },
    );
    if (taken.kind === 'busy') return busyOutcome(taken, ctx.messageId, message, now(), random);
    const lease = taken.lease;
    // When this run held the Lease, for its outcome line: from the take's answer to the moment the
    // request that gives it back (the closing status write or the release) was sent. Another run's
    // take can only land after that request, so two runs' held times never overlap.
    const heldFrom = now().getTime();
    let closeSentAt: number | undefined;
    // The value that means free now: the one the take found, which is newer than our view of the
    // Release when a run closed the Lease since our read. Giving the Lease back without a status
    // write must restore exactly that value; our own older view would leave a holder that no
    // run's view of the Release matches, so every message would wait for the Lease to expire.
    const freeNow = taken.how === 'free' && taken.freeAs !== undefined ? taken.freeAs : closedAs;
    // The mark the holder carries (a take after a newer close carries a later one than firstMark).
    const mark =
      firstMark === undefined ? undefined : (markOfHolder(options.loop, lease.holder) ?? firstMark);
    // The Release read before the take is current only when the take proves no run came in between.
    const proven =
      taken.how === 'created' || (taken.how === 'free' && taken.freeAs !== undefined && taken.freeAs !== '');
    if (marks !== undefined && !proven) marks.stale(message);
    const skip = skipReason(lease, message, ctx, now());
    if (skip !== undefined) {
      await options.leases.release(lease, lease.followUp, {}, { closeAs: freeNow });
      return dropped(skip);
    }
    const heartbeat = startHeartbeat(options.leases, lease, heartbeatMs(options.durationSeconds), ctx.logger);
    /** What the status carries after this run's write; undefined: no write landed. */
    let written: { readonly mark: string | undefined } | undefined;
    const runLease: RunLease | undefined =
      mark === undefined
        ? undefined
        : {
            mark,
            closes: (ended) => closesByStatus(ended, lease, ctx.messageId),
            writing(stamp) {
              if (stamp === mark) closeSentAt = now().getTime();
            },
            written(value) {
              written = { mark: value };
              // Written with `mark`, the Lease may be someone else's from now on: no more renewals.
              if (value === mark) heartbeat.pause();
            },
          };
    let outcome: Outcome | undefined;
    try {
      const decided = await handler(message, received);
      outcome = await commitRun(decided, {
        loop: options.loop,
        message,
        logger: received.logger,
        ports: options.commit,
        lease: runLease,
      });
      if (outcome.kind === 'retry') outcome = { ...outcome, attempt: lease.failures + 1 };
      return outcome;
    } finally {
      await heartbeat.stop();
      if (outcome?.kind === 'dropped' && outcome.gone === true) {
        await options.leases.forget(lease);
      } else if (
        mark !== undefined &&
        written?.mark === mark &&
        outcome !== undefined &&
        closesByStatus(outcome, lease, ctx.messageId)
      ) {
        // The status write closed the Lease (domain/runtime/lease-close.ts): nothing to give back.
        ctx.annotate?.({ leaseHeldFrom: heldFrom, leaseHeldUntil: closeSentAt });
      } else {
        ctx.annotate?.({ leaseHeldFrom: heldFrom, leaseHeldUntil: now().getTime() });
        await giveBack(options.leases, lease, outcome, {
          followUp: followUpOf(outcome, lease, ctx, received.messageId, now()),
          sentAt: message.sentAt,
          closeAs: written === undefined ? freeNow : closedHolder(options.loop, written.mark),
        });
      }
    }
  };
}

/** Gives the Lease back after a run its status write did not close: the failure count and the newest message handled. */
async function giveBack(
  leases: LeasePort,
  lease: HeldLease,
  outcome: Outcome | undefined,
  how: { followUp: ReturnType<typeof followUpOf>; sentAt: string | undefined; closeAs: string },
): Promise<void> {
  const failed = outcome === undefined || outcome.kind === 'retry';
  await leases.release(
    lease,
    how.followUp,
    {
      failures: outcome?.kind === 'dropped' ? lease.failures : failed ? lease.failures + 1 : 0,
      handledSentAt:
        outcome?.kind === 'dropped' ? lease.handledSentAt : newerSentAt(lease.handledSentAt, how.sentAt),
    },
    { closeAs: how.closeAs },
  );
}

/** A message that finds the Lease busy: dropped when the run in progress covers it, else it waits as a new message. */
function busyOutcome(
  busy: BusyLease,
  messageId: string,
  message: QueueMessage,
  now: Date,
  random: () => number,
): Outcome {
  // Only a live holder covers a message: a crashed one's own message comes back as a redelivery.
  // Never the follow-up the Lease records: the holder may end without taking over its chain.
  const followUp = busy.followUpId === undefined ? undefined : { messageId: busy.followUpId };
  if (
    busy.holderSentAt !== undefined &&
    holderAlive(busy, now) &&
    isCovered(busy.holderSentAt, messageId, message.sentAt, followUp)
  ) {
    return dropped(
      `covered by the run in progress (${busy.holder}), whose message was sent at ${busy.holderSentAt}`,
    );
  }
  return waitAsNewMessage(busyWaitMs(busy, now, random), `lease held by ${busy.holder}`);
}

export interface LeasePeekOptions {
  loop: QueueLoop;
  leases: LeasePort;
  random?: () => number;
  now?: () => Date;
}

/**
 * Reads the Lease first, in one GET that writes nothing, for a loop whose runs give their Lease
 * back as "" (no status marks: the fleet). A message that finds it busy waits or is dropped as
 * withLease would, and one that a free Lease's record shows handled (superseded, covered, a tick
 * during backoff) is dropped, both without the admission's read or a take; anything else goes on
 * to `handler` (the admission, then withLease, which decides again under the take). Where most
 * messages arrive while a run is under way (a set hears of every child's verdict), a message then
 * costs one request instead of three (the fleet bench); a run costs one more.
 * Dropping on a read is as safe as after a take: the record only moves forward (handledSentAt
 * grows; a recorded follow-up or retry has not run yet, or the Lease would show its run).
 */
export function withLeasePeek(handler: RecordHandler, options: LeasePeekOptions): RecordHandler {
  const random = options.random ?? Math.random;
  const now = options.now ?? (() => new Date());
  return async (message, received) => {
    const messageId = chainIdOf(message, received.messageId);
    const seen = await options.leases.peek(options.loop, message.uid);
    if (seen.kind === 'busy') return busyOutcome(seen, messageId, message, now(), random);
    if (seen.kind === 'free') {
      const skip = skipReason(seen.record, message, { ...received, messageId }, now());
      if (skip !== undefined) return dropped(skip);
    }
    return handler(message, received);
  };
}

function skipReason(
  lease: LeaseRecord,
  message: QueueMessage,
  ctx: RecordContext,
  now: Date,
): string | undefined {
  if (isSuperseded(lease, ctx.messageId, ctx.receiveCount, message.sentAt))
    return `superseded by follow-up ${lease.followUp?.messageId ?? ''}`;
  if (isCovered(lease.handledSentAt, ctx.messageId, message.sentAt, lease.followUp)) {
    return `already handled: a finished run handled a message sent at ${lease.handledSentAt ?? ''}, this one was sent at ${message.sentAt}`;
  }
  if (isTickDuringBackoff(lease, ctx.messageId, message.cause, now)) {
    return `a retry after ${lease.failures} failures is scheduled at ${lease.followUp?.dueAt ?? ''}; the interval tick waits for it`;
  }
  return undefined;
}

/**
 * The one message that brings the next run: this one when it waits or retries, else none (dropped:
 * kept). A wait sent again as a new message is still this one: the copy carries the chain's id.
 */
function followUpOf(
  outcome: Outcome | undefined,
  lease: HeldLease,
  ctx: RecordContext,
  recordMessageId: string,
  now: Date,
): FollowUp | undefined {
  const messageId = ctx.messageId;
  if (outcome === undefined) return { messageId };
  if (outcome.kind === 'retry') {
    // The same delay the runtime gives the record (adapters/sqs/outcome-actions.ts: jittered by the record's own id).
    const seconds = retryDelaySeconds(
      Math.max(ctx.receiveCount, outcome.attempt ?? 0),
      outcome.policy,
      recordMessageId,
    );
    return { messageId, dueAt: new Date(now.getTime() + Math.max(seconds, 1) * 1000).toISOString() };
  }
  if (outcome.kind === 'requeueAfter') {
    return { messageId, dueAt: new Date(now.getTime() + outcome.delayMs).toISOString() };
  }
  if (outcome.kind === 'dropped') return lease.followUp;
  return undefined;
}

/** Renews the Lease every `everyMs` while the run lives; a failed renewal is retried at the next beat. */
function startHeartbeat(leases: LeasePort, lease: HeldLease, everyMs: number, logger: Logger) {
  let beating: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    beating = leases
      .renew(lease)
      .then((ours) => {
        if (!ours)
          logger.warn('the Lease was taken over while this run was still alive', { lease: lease.name });
      })
      .catch((error: unknown) =>
        logger.warn('renewing the Lease failed; retried at the next beat', { lease: lease.name, error }),
      );
  }, everyMs);
  timer.unref();
  return {
    pause() {
      clearInterval(timer);
    },
    async stop() {
      clearInterval(timer);
      await beating;
    },
  };
}
