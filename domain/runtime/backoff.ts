/**
 * Retry backoff for failed messages. The delay becomes an SQS visibility
 * timeout, so it is whole seconds and never longer than SQS allows.
 */

/** spec.syncPolicy.retryBackoff with its durations already in milliseconds. */
export interface RetryBackoffPolicy {
  readonly initialMs: number;
  readonly factor: number;
  readonly maxMs: number;
}

/** SQS's longest visibility timeout (12 h); a longer delay is capped and the record retried then. */
export const MAX_DELAY_SECONDS = 43_200;

/** The default rate limit of a controller work queue (client-go): 5 ms doubling per attempt up to 1000 s. */
export const DEFAULT_RETRY_BACKOFF: RetryBackoffPolicy = { initialMs: 5, factor: 2, maxMs: 1_000_000 };

/**
 * Delay in milliseconds before attempt `attempt + 1`:
 * `min(initialMs × factor^(attempt-1), maxMs)`, not yet rounded.
 *
 * `attempt` is the record's ApproximateReceiveCount (>= 1). A value below 1
 * or not a number counts as 1, so a missing attribute never breaks the runtime.
 *
 * @throws RangeError when the policy is invalid (negative, not finite, factor < 1).
 */
export function retryDelayMs(attempt: number, policy: RetryBackoffPolicy = DEFAULT_RETRY_BACKOFF): number {
  assertValidPolicy(policy);
  const n = Number.isFinite(attempt) && attempt >= 1 ? Math.floor(attempt) : 1;
  if (policy.initialMs === 0) return 0;
  // factor^(n-1) overflows to Infinity for huge attempts; that is simply "past the max".
  const raw = policy.initialMs * Math.pow(policy.factor, n - 1);
  return Number.isFinite(raw) ? Math.min(raw, policy.maxMs) : policy.maxMs;
}

/**
 * The same delay as a visibility timeout: rounded up to whole seconds (so a
 * positive delay is at least 1 s) and capped at MAX_DELAY_SECONDS.
 */
export function retryDelaySeconds(attempt: number, policy?: RetryBackoffPolicy): number {
  return delayMsToSeconds(retryDelayMs(attempt, policy));
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
}
