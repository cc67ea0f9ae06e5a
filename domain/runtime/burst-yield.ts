/**
 * Yielding to a reconcile burst. When many Releases are deployed at once, the
 * reconcile queue holds a backlog of first deploys; the observers' first checks (drift and health,
 * told by each reconcile that applied a render) and the rollout rechecks (a reconcile message
 * redelivered to look at a Progressing wave again) then compete with those applies for the same
 * apiserver: each costs a Lease and a status write, the dearest request kind. While the reconcile
 * queue's own count of messages waiting for a function (SQS ApproximateNumberOfMessages: visible,
 * neither in flight nor delayed) is at or above a threshold, such a message waits instead — with no
 * request to Kubernetes at all — and runs once the backlog has drained, or when it has waited
 * long enough (a cap on how stale a burst can make a verdict).
 *
 * What yields, and why only that:
 * - drift and health: every message (a notice after an apply, an interval tick): their verdicts
 *   follow the applies; none of them writes anything a reconcile needs.
 * - reconcile: only a redelivery that is not a change (a rollout or wave recheck, a retry): a
 *   first delivery is the burst itself (a new Release, a spec change, a push).
 *
 * A message carrying the reconcile's sealed answers (the `applied` hint) waits only as long as
 * the hint stays usable (functions/runtime/applied-hint.ts: 30 s): run later without it, an
 * observer reads the Release and every object again (12 requests for the bench's reference app instead of
 * 4 — measured in the bench's side by side), which a burst must not trade for a shorter wall.
 * A first deploy whose rollout the reconcile will recheck sends no notices during a burst at
 * all (`noticesWaitForRolloutEnd`): the run that finishes the rollout tells drift and health
 * (cause `settled`). That run read only what its wave waited on, so it seals no answers and the
 * observers read then: the first deploy costs ~6 requests more in all (bench flux, N = 1,000:
 * 23.1 per Release until settled against 17.1), each after the burst instead of 4 inside it.
 *
 * The backlog is measured, never guessed: one GetQueueAttributes per container per few seconds
 * (adapters/sqs/queue-backlog.ts). How long to wait grows with it: the backlog times the time a
 * reconcile of it takes at least, within [minWaitMs, maxWaitMs], spread by the Release's uid so
 * that the waiting messages do not all come back in the same second.
 */
import { unitHash } from './backoff.ts';
import type { Outcome } from './outcome.ts';
import type { Loop } from './queue-message.ts';

export interface BurstPolicy {
  /** Reconcile messages waiting for a function at or above which a burst is under way. */
  readonly backlogThreshold: number;
  /** The shortest and longest single wait. */
  readonly minWaitMs: number;
  readonly maxWaitMs: number;
  /** Per waiting reconcile message: how much longer to wait (the backlog drains at least this slowly). */
  readonly waitPerMessageMs: number;
  /** A message is never held past this age (since it was first sent): how stale a burst may make a verdict. */
  readonly maxAgeMs: number;
}

/**
 * The defaults. A threshold of 10 is one full batch of the event source mapping waiting for a
 * free function: fewer than that is a busy queue, not a burst. 50 ms per waiting message: the
 * bench's side-by-side at N = 1,000 drains ~7 reconciles a second on 2 cores, 150 ms each; a
 * shorter estimate only brings the message back once more. Five minutes: the default drift
 * interval, the staleness an observer verdict may have anyway.
 */
export const DEFAULT_BURST_POLICY: BurstPolicy = {
  backlogThreshold: 10,
  minWaitMs: 10_000,
  maxWaitMs: 60_000,
  waitPerMessageMs: 50,
  maxAgeMs: 5 * 60_000,
};

export interface BurstYieldInput {
  readonly loop: Loop;
  /** The reconcile queue's messages waiting for a function; undefined when it could not be read (never yields). */
  readonly backlog: number | undefined;
  /** ApproximateReceiveCount of this delivery: 1 on the first. */
  readonly receiveCount: number;
  /** Whether the message announces a change (a push, a dependency): such a reconcile redelivery never yields. */
  readonly announcesChange: boolean;
  /** When the message was first sent (its body's sentAt; a resent message keeps it). */
  readonly sentAt: Date | undefined;
  readonly now: Date;
  /** Spreads the waits (the Release's uid, or its key). */
  readonly spreadKey: string;
}

/** How long the message waits for the burst to drain, or undefined when it runs now. */
export function burstWaitMs(
  input: BurstYieldInput,
  policy: BurstPolicy = DEFAULT_BURST_POLICY,
): number | undefined {
  if (!yieldsInBurst(input)) return undefined;
  if (input.backlog === undefined || input.backlog < policy.backlogThreshold) return undefined;
  const sent = input.sentAt?.getTime();
  const now = input.now.getTime();
  // Unknown or future send times (a forged or skewed body) run now: waiting needs a known age to end.
  if (sent === undefined || Number.isNaN(sent) || sent > now) return undefined;
  // What is left of the message's age cap: less than the shortest wait, and it runs now.
  const left = policy.maxAgeMs - (now - sent);
  if (left < policy.minWaitMs) return undefined;
  const base = Math.min(
    policy.maxWaitMs,
    Math.max(policy.minWaitMs, input.backlog * policy.waitPerMessageMs),
  );
  // +0–20 %, stable per Release; never past the message's age cap.
  const spread = Math.floor((base * (unitHash(input.spreadKey) * 20)) / 100);
  return Math.min(base + spread, left);
}

/** Whether a message of this loop may wait for a burst at all (before the backlog is read). */
export function yieldsInBurst(
  input: Pick<BurstYieldInput, 'loop' | 'receiveCount' | 'announcesChange'>,
): boolean {
  if (input.loop === 'drift' || input.loop === 'health') return true;
  return input.receiveCount > 1 && !input.announcesChange;
}

/**
 * Whether a reconcile holds back its notices to drift and health: during a burst, for a first
 * deploy (no render applied before this run: the observers have no verdict it could make stale)
 * whose run ends waiting for a recheck (a Progressing rollout or wave). The run that finishes
 * the rollout tells them (domain/reconcile/conclude.ts, `settled`), and the relay counts this
 * run's status write as their sends either way (domain/relay/timers.ts observersNotified).
 */
export function noticesWaitForRolloutEnd(
  input: {
    readonly backlog: number | undefined;
    readonly firstDeploy: boolean;
    readonly rolloutProgressing: boolean;
    readonly outcome: Outcome;
  },
  policy: BurstPolicy = DEFAULT_BURST_POLICY,
): boolean {
  return (
    input.firstDeploy &&
    input.rolloutProgressing &&
    input.outcome.kind === 'requeueAfter' &&
    input.backlog !== undefined &&
    input.backlog >= policy.backlogThreshold
  );
}
