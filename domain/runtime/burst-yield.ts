/**
 * Yielding to a reconcile burst (issue 24 item 2). When many Releases are deployed at once, the
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
 * The backlog is measured, never guessed: one GetQueueAttributes per container per few seconds
 * (adapters/sqs/queue-backlog.ts). How long to wait grows with it: the backlog times the time a
 * reconcile of it takes at least, within [minWaitMs, maxWaitMs], spread by the Release's uid so
 * that the waiting messages do not all come back in the same second.
 */
import type { Loop } from './queue-message.ts';

export interface BurstPolicy {
  /** Reconcile messages waiting for a function at or above which a burst is under way. */
  readonly backlogThreshold: number;
  /** The shortest and longest single wait. */
  readonly minWaitMs: number;
  readonly maxWaitMs: number;
  /** Per waiting reconcile message: how much longer to wait (the backlog drains at least this slowly). */
  readonly waitPerMessageMs: number;
  /** A message older than this (since it was first sent) runs whatever the backlog: how stale a burst may make a verdict. */
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
export function burstWaitMs(input: BurstYieldInput, policy: BurstPolicy = DEFAULT_BURST_POLICY): number | undefined {
  if (!yieldsInBurst(input)) return undefined;
  if (input.backlog === undefined || input.backlog < policy.backlogThreshold) return undefined;
  const sent = input.sentAt?.getTime();
  const now = input.now.getTime();
  // Unknown or future send times (a forged or skewed body) run now: waiting needs a known age to end.
  if (sent === undefined || Number.isNaN(sent) || sent > now) return undefined;
  const age = now - sent;
  if (age >= policy.maxAgeMs) return undefined;
  const base = Math.min(policy.maxWaitMs, Math.max(policy.minWaitMs, input.backlog * policy.waitPerMessageMs));
  // +0–20 %, stable per Release, never past the message's age cap by more than the spread.
  const spread = Math.floor((base * (spreadFraction(input.spreadKey) * 20)) / 100);
  return Math.min(base + spread, Math.max(policy.minWaitMs, policy.maxAgeMs - age));
}

function yieldsInBurst(input: BurstYieldInput): boolean {
  if (input.loop === 'drift' || input.loop === 'health') return true;
  return input.receiveCount > 1 && !input.announcesChange;
}

/** A stable fraction in [0, 1) for a key (FNV-1a, 32 bits). */
function spreadFraction(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 0x1_0000_0000;
}
