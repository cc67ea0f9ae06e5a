/**
 * Retry backoff for failed messages. The delay becomes an SQS visibility
 * timeout, so it is whole seconds and never longer than SQS allows.
 */

/** spec.syncPolicy.retryBackoff with its durations already in milliseconds. */
export interface RetryBackoffPolicy {
  readonly initialMs: number;
  readonly factor: number;
  readonly maxMs: number;
  /**
   * "Equal jitter" fraction in [0, 1]: the delay is drawn from [d × (1 − jitter), d], d being
   * the delay without jitter. 0 or absent: exactly d (spec.syncPolicy.retryBackoff is followed
   * to the second).
   */
  readonly jitter?: number;
}

/** SQS's longest visibility timeout (12 h); a longer delay is capped and the record retried then. */
export const MAX_DELAY_SECONDS = 43_200;

/**
 * The backoff of a Release without spec.syncPolicy.retryBackoff (docs/decisions.md
 * "Default retry backoff"): 2 s doubling per attempt up to 5 min, with equal jitter, so the
 * first retry comes after 1–2 s, the eighth after 128–256 s, and every later one after
 * 150–300 s. client-go's work-queue default (5 ms doubling to 1000 s) is for in-memory queues
 * of cheap reads; here a retry is a Git fetch or an apply, and SQS cannot wait less than 1 s, so
 * that default meant eight retries in ~10 s — every Release at once when a Git server is down.
 */
export const DEFAULT_RETRY_BACKOFF: RetryBackoffPolicy = {
  initialMs: 2_000,
  factor: 2,
  maxMs: 300_000,
  jitter: 0.5,
};

/**
 * Delay in milliseconds before attempt `attempt + 1`:
 * `min(initialMs × factor^(attempt-1), maxMs)`, not yet rounded; with `policy.jitter`, that
 * delay less up to its `jitter` fraction.
 *
 * `attempt` is the record's ApproximateReceiveCount (>= 1). A value below 1
 * or not a number counts as 1, so a missing attribute never breaks the runtime.
 *
 * `jitterKey` (the SQS message id) picks where in the jitter range the delay falls: a hash of
 * the key and the attempt, so the runtime and the Lease compute the same delay for one
 * delivery while different messages spread out. Without a key the delay is the top of the range.
 *
 * @throws RangeError when the policy is invalid (negative, not finite, factor < 1, jitter outside [0, 1]).
 */
export function retryDelayMs(
  attempt: number,
  policy: RetryBackoffPolicy = DEFAULT_RETRY_BACKOFF,
  jitterKey?: string,
): number {
  assertValidPolicy(policy);
  const n = Number.isFinite(attempt) && attempt >= 1 ? Math.floor(attempt) : 1;
  if (policy.initialMs === 0) return 0;
  // factor^(n-1) overflows to Infinity for huge attempts; that is simply "past the max".
  const raw = policy.initialMs * Math.pow(policy.factor, n - 1);
  const delay = Number.isFinite(raw) ? Math.min(raw, policy.maxMs) : policy.maxMs;
  const jitter = policy.jitter ?? 0;
  if (jitter === 0 || jitterKey === undefined) return delay;
  return delay * (1 - jitter * unitHash(`${jitterKey}/${n}`));
}

/**
 * The same delay as a visibility timeout: rounded up to whole seconds (so a
 * positive delay is at least 1 s) and capped at MAX_DELAY_SECONDS.
 */
export function retryDelaySeconds(attempt: number, policy?: RetryBackoffPolicy, jitterKey?: string): number {
  return delayMsToSeconds(retryDelayMs(attempt, policy, jitterKey));
}

/** A stable number in [0, 1) for `key` (FNV-1a, 32 bits). */
export function unitHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash / 0x1_0000_0000;
}

/** Milliseconds → whole seconds for SQS: rounded up, capped at 12 h. */
export function delayMsToSeconds(delayMs: number): number {
  if (!(delayMs > 0)) return 0;
  return Math.min(Math.ceil(delayMs / 1000), MAX_DELAY_SECONDS);
}

function assertValidPolicy(policy: RetryBackoffPolicy): void {
  const { initialMs, factor, maxMs } = policy;
  if (!Number.isFinite(initialMs) || initialMs < 0) {
    throw new RangeError(`retry backoff: initialMs must be a finite number >= 0, got ${initialMs}`);
  }
  if (!Number.isFinite(factor) || factor < 1) {
    throw new RangeError(`retry backoff: factor must be a finite number >= 1, got ${factor}`);
  }
  if (!Number.isFinite(maxMs) || maxMs < 0) {
    throw new RangeError(`retry backoff: maxMs must be a finite number >= 0, got ${maxMs}`);
  }
  const jitter = policy.jitter ?? 0;
  if (!Number.isFinite(jitter) || jitter < 0 || jitter > 1) {
    throw new RangeError(`retry backoff: jitter must be a fraction between 0 and 1, got ${jitter}`);
  }
}
