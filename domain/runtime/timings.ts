/**
 * The one place the functions' timings come from: the function timeout, the
 * per-Release Lease and its renewal, the queues' visibility timeout and maxReceiveCount. The CDK
 * construct derives the template from `deriveTimings` and refuses, at synth, any combination
 * `timingViolations` finds; the functions take the Lease duration and heartbeat from here.
 *
 * The rules (docs/decisions.md, "Function timings: one source, checked at synth"):
 * - visibility ≥ 6 × function timeout: AWS's advice for an SQS event source mapping, so Lambda
 *   can retry a throttled batch before its messages come back;
 * - a killed invocation's Lease expires before its messages come back: timeout + Lease < visibility
 *   (the heartbeat stops when the invocation dies; the Lease lasts LEASE_SECONDS after the last renewal);
 * - a wait rechecked every 10 s (a Progressing wave, a cluster wave, a hook) for its whole timeout
 *   never reaches maxReceiveCount: every recheck is a receive of the same message;
 * - and the services' own limits: Lambda's 15 minutes, SQS's 12 h visibility and 1000 receives.
 */
import { ROLLOUT_RECHECK_MS } from '../reconcile/stops.ts';

/** Lambda's longest function timeout. */
export const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
/** SQS's longest visibility timeout (12 h). */
export const SQS_MAX_VISIBILITY_SECONDS = 43_200;
/** SQS's largest RedrivePolicy maxReceiveCount. */
export const SQS_MAX_RECEIVE_COUNT = 1000;
/** AWS: "Set the queue's visibility timeout to at least six times the function timeout." */
export const VISIBILITY_PER_TIMEOUT = 6;

/**
 * The function timeout by default: Helm's and Flux's default operation timeout. A run renders one
 * Release and applies one wave; waits are rechecks (new receives), never held inside a run.
 */
export const DEFAULT_FUNCTION_TIMEOUT_SECONDS = 300;

/**
 * The per-Release Lease: short, so a crashed run blocks its Release for at most a minute; a live
 * run renews it every LEASE_SECONDS / LEASE_RENEWALS (docs/decisions.md, "Leases").
 */
export const LEASE_SECONDS = 60;
export const LEASE_RENEWALS = 4;

/**
 * The longest wait rechecked every 10 s that an installation allows by default: the API's
 * clusterWaveTimeout default (30m), above waveTimeout's (5m) and a hook's (10m).
 */
export const DEFAULT_MAX_WAVE_TIMEOUT_SECONDS = 1800;

/**
 * Receives a waiting message may spend besides its rechecks: the run that applied the wave, the
 * run that finds the timeout, and transient failures retried on the way (each a receive).
 */
export const RECEIVE_HEADROOM = 10;

/** The event source mappings' MaximumBatchingWindowInSeconds (none: a batch is invoked at once). */
export const BATCHING_WINDOW_SECONDS = 0;

/** What a user may set (the construct's props, in seconds); everything else is derived. */
export interface TimingSettings {
  functionTimeoutSeconds?: number | undefined;
  visibilityTimeoutSeconds?: number | undefined;
  maxReceiveCount?: number | undefined;
  maxWaveTimeoutSeconds?: number | undefined;
}

export interface Timings {
  functionTimeoutSeconds: number;
  visibilityTimeoutSeconds: number;
  maxReceiveCount: number;
  maxWaveTimeoutSeconds: number;
  leaseSeconds: number;
  heartbeatMs: number;
  recheckMs: number;
}

/** A broken rule: the props involved (construct names) and why. */
export interface TimingViolation {
  props: readonly string[];
  rule: string;
}

/** How often a live run renews a Lease of this duration. */
export function heartbeatMs(durationSeconds: number): number {
  return Math.max(1_000, Math.floor((durationSeconds * 1000) / LEASE_RENEWALS));
}

/** Receives a message spends waiting `waitSeconds` at the 10-s recheck, headroom included. */
export function receivesForWait(waitSeconds: number): number {
  return Math.ceil((waitSeconds * 1000) / ROLLOUT_RECHECK_MS) + RECEIVE_HEADROOM;
}

/** The timings for these settings (defaults derived as the rules require); check them with timingViolations. */
export function deriveTimings(settings: TimingSettings = {}): Timings {
  const functionTimeoutSeconds = settings.functionTimeoutSeconds ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS;
  const maxWaveTimeoutSeconds = settings.maxWaveTimeoutSeconds ?? DEFAULT_MAX_WAVE_TIMEOUT_SECONDS;
  return {
    functionTimeoutSeconds,
    visibilityTimeoutSeconds:
      settings.visibilityTimeoutSeconds ?? VISIBILITY_PER_TIMEOUT * functionTimeoutSeconds,
    maxReceiveCount: settings.maxReceiveCount ?? receivesForWait(maxWaveTimeoutSeconds),
    maxWaveTimeoutSeconds,
    leaseSeconds: LEASE_SECONDS,
    heartbeatMs: heartbeatMs(LEASE_SECONDS),
    recheckMs: ROLLOUT_RECHECK_MS,
  };
}

/** Every rule these timings break; empty when they are consistent. */
export function timingViolations(t: Timings): TimingViolation[] {
  const out: TimingViolation[] = [];
  const T = t.functionTimeoutSeconds;
  const V = t.visibilityTimeoutSeconds;
  if (!Number.isInteger(T) || T < 1 || T > LAMBDA_MAX_TIMEOUT_SECONDS) {
    out.push({
      props: ['functionTimeout'],
      rule: `is ${T} s; Lambda accepts whole seconds from 1 to ${LAMBDA_MAX_TIMEOUT_SECONDS} (15 minutes)`,
    });
  }
  if (!Number.isInteger(V) || V < 0 || V > SQS_MAX_VISIBILITY_SECONDS) {
    out.push({
      props: ['queueVisibilityTimeout'],
      rule: `is ${V} s; SQS accepts whole seconds up to ${SQS_MAX_VISIBILITY_SECONDS} (12 h)`,
    });
  }
  if (V < VISIBILITY_PER_TIMEOUT * T) {
    out.push({
      props: ['queueVisibilityTimeout', 'functionTimeout'],
      rule: `visibility ${V} s is less than ${VISIBILITY_PER_TIMEOUT} × the function timeout (${VISIBILITY_PER_TIMEOUT * T} s), as AWS advises for an SQS event source mapping (Lambda retries a throttled batch within it); raise queueVisibilityTimeout or lower functionTimeout`,
    });
  }
  const leaseGone = BATCHING_WINDOW_SECONDS + T + t.leaseSeconds;
  if (V <= leaseGone) {
    out.push({
      props: ['queueVisibilityTimeout', 'functionTimeout'],
      rule: `a killed invocation's Lease expires up to ${leaseGone} s after its batch was received (timeout ${T} s + Lease ${t.leaseSeconds} s), not before its messages come back after the ${V}-s visibility; raise queueVisibilityTimeout above ${leaseGone} s or lower functionTimeout`,
    });
  }
  const R = t.maxReceiveCount;
  if (!Number.isInteger(R) || R < 1 || R > SQS_MAX_RECEIVE_COUNT) {
    out.push({
      props: ['maxReceiveCount', 'maxWaveTimeout'],
      rule: `maxReceiveCount is ${R}; SQS accepts an integer from 1 to ${SQS_MAX_RECEIVE_COUNT} (lower maxWaveTimeout when it is derived from it)`,
    });
  }
  const waiting = receivesForWait(t.maxWaveTimeoutSeconds);
  if (R < waiting) {
    out.push({
      props: ['maxReceiveCount', 'maxWaveTimeout'],
      rule: `a wait of maxWaveTimeout ${t.maxWaveTimeoutSeconds} s rechecked every ${t.recheckMs / 1000} s spends up to ${waiting} receives (${RECEIVE_HEADROOM} of them headroom), more than maxReceiveCount ${R}, so a Release that is merely waiting would be dead-lettered; raise maxReceiveCount to ${waiting} or lower maxWaveTimeout`,
    });
  }
  return out;
}
