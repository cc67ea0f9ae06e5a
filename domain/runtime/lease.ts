/**
 * One run per Release and loop at a time: the port the runtime takes a
 * Lease through, and the rules that collapse duplicate messages, keep the
 * backoff of a failing Release across interval ticks, and decide how long a
 * message that finds the Lease busy waits (docs/decisions.md, "Leases").
 */
import type { QueueMessage } from './queue-message.ts';
import { heartbeatMs, LEASE_SECONDS } from './timings.ts';

export interface FollowUp {
  /** The SQS message that will bring the next run of this loop for this Release. */
  messageId: string;
  /** RFC 3339; when it is due. */
  dueAt?: string;
  /**
   * RFC 3339; set when a Release's first run recorded itself as the follow-up before it knew
   * its outcome (lease-close.ts): it supersedes only messages sent before it started.
   */
  since?: string;
}

/** What a Lease remembers between runs (annotations of the Lease). */
export interface LeaseRecord {
  /** The one scheduled follow-up, if any. */
  followUp: FollowUp | undefined;
  /** Consecutive runs that ended in a retry; 0 after any other outcome. */
  failures: number;
  /** sentAt of the newest message whose run finished (any outcome but dropped). */
  handledSentAt: string | undefined;
}

export interface HeldLease extends LeaseRecord {
  name: string;
  holder: string;
}

export type AcquireResult =
  | {
      kind: 'acquired';
      lease: HeldLease;
      /**
       * How: 'created' (no run held it before), 'free' (from holderIdentity `freeAs`: "" or the
       * value a status write closed it with), 'takenOver' (from a holder that stopped renewing).
       */
      how?: 'created' | 'free' | 'takenOver';
      freeAs?: string;
    }
  | {
      kind: 'busy';
      holder: string;
      /** sentAt of the message the holder runs, when it recorded one. */
      holderSentAt?: string | undefined;
      /** The follow-up the Lease records (its message id): a run in progress never covers it. */
      followUpId?: string | undefined;
      /** When the holder last renewed (or took) the Lease, RFC 3339; undefined when unknown (a race). */
      renewedAt?: string | undefined;
      durationSeconds?: number | undefined;
    };

/** The Lease's busy answer (AcquireResult's `busy`). */
export type BusyLease = Extract<AcquireResult, { kind: 'busy' }>;

/**
 * The Lease as one read finds it (LeasePort.peek): missing, free (holder ""), held by a holder
 * whose time ran out (a take would take it over), or busy.
 */
export type LeasePeek =
  | { readonly kind: 'missing' }
  | { readonly kind: 'free' | 'expired'; readonly record: LeaseRecord }
  | BusyLease;

export interface AcquireOptions {
  /** The Lease most likely does not exist yet (a Release's first run of this loop): create it first. */
  createFirst?: boolean;
  /**
   * The holder value that means free besides "": the Lease as the last run's status write
   * closed it (lease-close.ts closedHolder). Default "" only.
   */
  closedAs?: string;
  /** Reads the closed holder value again from the Release as stored now (the caller's view may be stale). */
  reread?: () => Promise<string>;
  /** Recorded as the follow-up of a Lease this call creates (the run's own message; lease-close.ts). */
  followUpOnCreate?: FollowUp;
  /**
   * The holder to take the Lease with when it turns out free as another value than `closedAs`
   * (a run closed it since the caller's view): a holder derived from that newer value, so the
   * run's mark stays strictly after the one that value names (lease-close.ts). Default `holder`.
   * The held lease's `holder` says which was used.
   */
  holderAfter?: (free: string) => string;
  /**
   * Keeps holder ids unique for the life of the Lease: given the holder a take carries and one
   * that already ran on this Lease (the last given back, or the expired one taken over), a later
   * holder to carry instead, or undefined to keep it (lease-close.ts holderAfterEarlier). A
   * take that must change its holder after the fact costs one more request.
   */
  unique?: (planned: string, earlier: string) => string | undefined;
}

export interface ReleaseOptions {
  /** The holder value the Lease is left with (lease-close.ts closedHolder); default "". */
  closeAs?: string;
}

export interface LeasePort {
  /** `sentAt`: the message's sentAt, recorded so that copies of it that arrive meanwhile can be dropped. */
  acquire(
    loop: string,
    releaseUid: string,
    holder: string,
    durationSeconds: number,
    sentAt?: string,
    options?: AcquireOptions,
  ): Promise<AcquireResult>;
  /** Reads the Lease (one GET, no write): for loops whose runs give it back as "" (no status marks). */
  peek(loop: string, releaseUid: string): Promise<LeasePeek>;
  /** Moves renewTime to now while the run lives; false when the Lease is no longer ours. */
  renew(lease: HeldLease): Promise<boolean>;
  /** Gives the Lease up, recording what the next run needs (the follow-up, the failure count, the last handled message). */
  release(
    lease: HeldLease,
    followUp: FollowUp | undefined,
    record?: Partial<Omit<LeaseRecord, 'followUp'>>,
    options?: ReleaseOptions,
  ): Promise<void>;
  /** Deletes a held Lease (its Release no longer exists). */
  forget(lease: HeldLease): Promise<void>;
  /** Removes every Lease of a Release (the relay calls it when the Release is deleted). */
  removeAll(releaseUid: string): Promise<void>;
  /** The Release uids that have Leases (the relay sweeps those of Releases deleted while no relay led). */
  releaseUids(): Promise<string[]>;
}

/**
 * Whether a message most likely starts the first run of its loop for its Release, so that its
 * Lease does not exist yet: the relay's message for an added (or recreated) Release, and the
 * reconcile's message to drift or health whose Release has no InSync or Healthy condition yet.
 * A wrong guess costs one request (the create answers 409 and the Lease is taken as usual).
 */
export function isLikelyFirstRun(message: QueueMessage): boolean {
  if (message.loop === 'reconcile')
    return (
      message.cause.startsWith('watch: Release added') || message.cause.startsWith('watch: Release recreated')
    );
  if (message.applied === undefined) return false;
  const status = message.applied.release['status'];
  const conditions =
    typeof status === 'object' && status !== null
      ? (status as { conditions?: unknown }).conditions
      : undefined;
  const type = message.loop === 'drift' ? 'InSync' : 'Healthy';
  return (
    !Array.isArray(conditions) ||
    !conditions.some((c) => typeof c === 'object' && c !== null && (c as { type?: unknown }).type === type)
  );
}

/** Lease owners that are no longer Releases: deleted while no relay was watching. */
export function orphanLeaseUids(leaseUids: readonly string[], releaseUids: ReadonlySet<string>): string[] {
  return [...new Set(leaseUids)].filter((uid) => !releaseUids.has(uid));
}

export function leaseName(loop: string, releaseUid: string): string {
  return `convoy-${loop}-${releaseUid}`;
}

/**
 * The longest Lease a run takes (domain/runtime/timings.ts, where the function timeout and the
 * queues' visibility are checked against it); it is renewed every quarter of it while the run lives.
 */
export const MAX_LEASE_SECONDS = LEASE_SECONDS;

export { heartbeatMs };

/**
 * A redelivered message (receiveCount > 1) is superseded when the Lease
 * records a different follow-up: a newer run already scheduled the next one.
 */
export function isSuperseded(
  lease: LeaseRecord,
  messageId: string,
  receiveCount: number,
  sentAt?: string,
): boolean {
  if (receiveCount <= 1 || lease.followUp === undefined || lease.followUp.messageId === messageId)
    return false;
  const since = lease.followUp.since === undefined ? Number.NaN : Date.parse(lease.followUp.since);
  const sent = sentAt === undefined ? Number.NaN : Date.parse(sentAt);
  // A follow-up recorded by a run that started before this message was sent does not cover it.
  return Number.isNaN(since) || Number.isNaN(sent) || sent <= since;
}

/**
 * A message is covered when a run that started after it was sent already
 * finished: that run read the Release after the change that sent the message.
 * Both times are the sender's clock (the message's sentAt). The scheduled
 * follow-up itself is never covered: it is the chain that continues the work.
 */
export function isCovered(
  handledSentAt: string | undefined,
  messageId: string,
  sentAt: string,
  followUp: FollowUp | undefined,
): boolean {
  if (handledSentAt === undefined || followUp?.messageId === messageId) return false;
  const handled = Date.parse(handledSentAt);
  const sent = Date.parse(sentAt);
  return !Number.isNaN(handled) && !Number.isNaN(sent) && sent <= handled;
}

/**
 * An interval tick while a retry is scheduled for later does not start a new
 * chain at the first backoff step (client-go keeps counting failures until
 * the item succeeds): the scheduled retry is the next run.
 */
export function isTickDuringBackoff(
  lease: LeaseRecord,
  messageId: string,
  cause: string,
  now: Date,
): boolean {
  if (lease.failures === 0 || lease.followUp === undefined || lease.followUp.messageId === messageId)
    return false;
  if (!cause.startsWith('timer:')) return false;
  const due = lease.followUp.dueAt === undefined ? Number.NaN : Date.parse(lease.followUp.dueAt);
  return !Number.isNaN(due) && due > now.getTime();
}

/** sentAt of the newer of two messages (undefined-safe). */
export function newerSentAt(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** How long a busy message waits before it looks again: 1–3 s with jitter. */
export function busyDelayMs(random: () => number): number {
  return 1000 + Math.floor(random() * 2000);
}

/**
 * How long a message that found the Lease busy waits, as a new delayed
 * message (so the wait costs no receive and never dead-letters it): 1–3 s
 * while the holder renews; until the Lease expires when the holder stopped
 * renewing (it crashed), at most SQS's 15-minute message delay.
 */
export function busyWaitMs(busy: BusyLease, now: Date, random: () => number): number {
  const renewed = busy.renewedAt === undefined ? Number.NaN : Date.parse(busy.renewedAt);
  const duration = busy.durationSeconds ?? 0;
  if (Number.isNaN(renewed) || duration <= 0) return busyDelayMs(random);
  const silentMs = now.getTime() - renewed;
  if (silentMs <= 2 * heartbeatMs(Math.min(duration, MAX_LEASE_SECONDS))) return busyDelayMs(random);
  const untilExpiry = renewed + duration * 1000 - now.getTime() + 1000;
  return Math.min(Math.max(untilExpiry, busyDelayMs(random)), MAX_MESSAGE_DELAY_MS);
}

/**
 * Whether a busy Lease's holder is still alive: it renewed within two heartbeats (or nothing says
 * otherwise). A crashed holder covers nothing: a message it was running comes back as a
 * redelivery with the holder's own sentAt, and must wait for the Lease rather than be dropped.
 */
export function holderAlive(busy: BusyLease, now: Date): boolean {
  const renewed = busy.renewedAt === undefined ? Number.NaN : Date.parse(busy.renewedAt);
  const duration = busy.durationSeconds ?? 0;
  if (Number.isNaN(renewed) || duration <= 0) return true;
  return now.getTime() - renewed <= 2 * heartbeatMs(Math.min(duration, MAX_LEASE_SECONDS));
}

/** SQS's longest DelaySeconds. */
export const MAX_MESSAGE_DELAY_MS = 900_000;
