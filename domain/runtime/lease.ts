/**
 * One run per Release and loop at a time: the port the runtime takes a
 * Lease through, and the rule that collapses duplicate messages to one chain.
 */

export interface FollowUp {
  /** The SQS message that will bring the next run of this loop for this Release. */
  messageId: string;
  /** RFC 3339; when it is due (informational). */
  dueAt?: string;
}

export interface HeldLease {
  name: string;
  holder: string;
  /** The follow-up the previous holder scheduled, if any. */
  followUp: FollowUp | undefined;
}

export type AcquireResult = { kind: 'acquired'; lease: HeldLease } | { kind: 'busy'; holder: string };

export interface LeasePort {
  acquire(loop: string, releaseUid: string, holder: string, durationSeconds: number): Promise<AcquireResult>;
  /** Gives the Lease up, recording the one scheduled follow-up; with none, the Lease records nothing and may be deleted. */
  release(lease: HeldLease, followUp: FollowUp | undefined): Promise<void>;
  /** Removes every Lease of a Release (the relay calls it when the Release is deleted). */
  removeAll(releaseUid: string): Promise<void>;
  /** The Release uids that have Leases (the relay sweeps those of Releases deleted while no relay led). */
  releaseUids(): Promise<string[]>;
}

/** Lease owners that are no longer Releases: deleted while no relay was watching. */
export function orphanLeaseUids(leaseUids: readonly string[], releaseUids: ReadonlySet<string>): string[] {
  return [...new Set(leaseUids)].filter((uid) => !releaseUids.has(uid));
}

export function leaseName(loop: string, releaseUid: string): string {
  return `convoy-${loop}-${releaseUid}`;
}

/**
 * A redelivered message (receiveCount > 1) is superseded when the Lease
 * records a different follow-up: a newer run already scheduled the next one.
 */
export function isSuperseded(lease: HeldLease, messageId: string, receiveCount: number): boolean {
  return receiveCount > 1 && lease.followUp !== undefined && lease.followUp.messageId !== messageId;
}

/** How long a busy message waits before it looks again: 1–3 s with jitter. */
export function busyDelayMs(random: () => number): number {
  return 1000 + Math.floor(random() * 2000);
}
