/**
 * The leader election rule, as client-go's leaderelection decides it: a
 * Lease held by another identity is valid until leaseDuration has passed
 * since this replica last saw the record change. Measuring from our own
 * observation (not the holder's renewTime) makes the rule immune to clock
 * skew between replicas.
 */

export interface LeaseRecord {
  /** Empty or absent: nobody holds it (a leader that stopped gave it up). */
  readonly holder: string | undefined;
  readonly renewTime: string | undefined;
  readonly leaseDurationSeconds: number | undefined;
  readonly resourceVersion: string | undefined;
}

export interface LeaseObservation {
  /** The record as last seen (holder, renew time, version). */
  readonly fingerprint: string;
  /** Local time (ms) when that record was first seen. */
  readonly observedAt: number;
}

export type LeaseDecision = 'renew' | 'acquire' | 'wait';

/** The observation after reading `record` at `now`. */
export function observeLease(
  previous: LeaseObservation | undefined,
  record: LeaseRecord,
  now: number,
): LeaseObservation {
  const fingerprint = `${record.holder ?? ''}|${record.renewTime ?? ''}|${record.resourceVersion ?? ''}`;
  return previous !== undefined && previous.fingerprint === fingerprint
    ? previous
    : { fingerprint, observedAt: now };
}

/** What `identity` should do with the Lease: renew it (ours), acquire it (free or expired), or wait (another holds it). */
export function leaseDecision(
  record: LeaseRecord,
  identity: string,
  observation: LeaseObservation,
  now: number,
  defaultDurationMs: number,
): LeaseDecision {
  const holder = record.holder ?? '';
  if (holder === identity) return 'renew';
  if (holder === '') return 'acquire';
  const durationMs =
    record.leaseDurationSeconds !== undefined ? record.leaseDurationSeconds * 1000 : defaultDurationMs;
  return observation.observedAt + durationMs <= now ? 'acquire' : 'wait';
}
