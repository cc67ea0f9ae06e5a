// domain/runtime/timings.ts: the one source of the function timeout, Lease, visibility and
// maxReceiveCount, and the rules that hold them together (docs/decisions.md, "Function timings").
import { describe, expect, it } from 'vitest';
import { heartbeatMs as leaseHeartbeatMs, MAX_LEASE_SECONDS } from '../../../domain/runtime/lease.ts';
import { ROLLOUT_RECHECK_MS } from '../../../domain/reconcile/stops.ts';
import {
  deriveTimings,
  heartbeatMs,
  LEASE_SECONDS,
  receivesForWait,
  timingViolations,
  type Timings,
} from '../../../domain/runtime/timings.ts';

const rulesOf = (t: Timings) => timingViolations(t).map((v) => `${v.props.join('+')}: ${v.rule}`);

describe('function timings', () => {
  it('defaults: 5-min timeout, visibility 6 × it (30 min), a 60-s Lease renewed every 15 s, 190 receives for a 30-min wait at 10-s rechecks; consistent', () => {
    const t = deriveTimings();
    expect(t).toEqual({
      functionTimeoutSeconds: 300,
      visibilityTimeoutSeconds: 1800,
      maxReceiveCount: 190,
      maxWaveTimeoutSeconds: 1800,
      leaseSeconds: 60,
      heartbeatMs: 15_000,
      recheckMs: 10_000,
    });
    expect(timingViolations(t)).toEqual([]);
  });

  it('the Lease guard and the runtime read the same Lease and heartbeat (lease.ts re-exports them), and the recheck is the rollout recheck', () => {
    expect(MAX_LEASE_SECONDS).toBe(LEASE_SECONDS);
    expect(leaseHeartbeatMs(LEASE_SECONDS)).toBe(heartbeatMs(LEASE_SECONDS));
    expect(deriveTimings().recheckMs).toBe(ROLLOUT_RECHECK_MS);
  });

  it('every function timeout Lambda accepts gets a consistent default visibility (6 × it is at most 90 min, far under the 12-h cap)', () => {
    for (const seconds of [15, 60, 300, 900])
      expect(rulesOf(deriveTimings({ functionTimeoutSeconds: seconds })), String(seconds)).toEqual([]);
    expect(deriveTimings({ functionTimeoutSeconds: 900 }).visibilityTimeoutSeconds).toBe(5400);
  });

  it('visibility ≥ 6 × function timeout (AWS, SQS event source mapping): a shorter one names queueVisibilityTimeout and functionTimeout', () => {
    expect(rulesOf(deriveTimings({ functionTimeoutSeconds: 300, visibilityTimeoutSeconds: 1799 }))).toEqual([
      expect.stringMatching(
        /^queueVisibilityTimeout\+functionTimeout: visibility 1799 s is less than 6 × the function timeout \(1800 s\)/,
      ),
    ]);
    expect(rulesOf(deriveTimings({ functionTimeoutSeconds: 300, visibilityTimeoutSeconds: 1800 }))).toEqual(
      [],
    );
  });

  it("a killed invocation's Lease expires before its batch comes back: timeout + Lease < visibility", () => {
    // 13 s × 6 = 78 s > 13 + 60: fine; 12 s × 6 = 72 s ≤ 12 + 60 and 10 s × 6 ≤ 10 + 60: the Lease would still be held.
    expect(rulesOf(deriveTimings({ functionTimeoutSeconds: 13 }))).toEqual([]);
    expect(rulesOf(deriveTimings({ functionTimeoutSeconds: 12 }))).toHaveLength(1);
    expect(rulesOf(deriveTimings({ functionTimeoutSeconds: 10 }))).toEqual([
      expect.stringMatching(
        /^queueVisibilityTimeout\+functionTimeout: a killed invocation's Lease expires up to 70 s after its batch was received \(timeout 10 s \+ Lease 60 s\), not before its messages come back after the 60-s visibility/,
      ),
    ]);
    expect(rulesOf(deriveTimings({ functionTimeoutSeconds: 10, visibilityTimeoutSeconds: 71 }))).toEqual([]);
  });

  it('a wait rechecked every 10 s for its whole maxWaveTimeout never reaches maxReceiveCount', () => {
    expect(receivesForWait(300)).toBe(40);
    expect(deriveTimings({ maxWaveTimeoutSeconds: 300 }).maxReceiveCount).toBe(40);
    expect(rulesOf(deriveTimings({ maxWaveTimeoutSeconds: 300, maxReceiveCount: 40 }))).toEqual([]);
    expect(rulesOf(deriveTimings({ maxWaveTimeoutSeconds: 300, maxReceiveCount: 39 }))).toEqual([
      expect.stringMatching(
        /^maxReceiveCount\+maxWaveTimeout: a wait of maxWaveTimeout 300 s rechecked every 10 s spends up to 40 receives \(10 of them headroom\), more than maxReceiveCount 39/,
      ),
    ]);
    // Receives counted causally: one receive per recheck of the wait, then the headroom.
    const t = deriveTimings({ maxWaveTimeoutSeconds: 300 });
    const rechecks = Math.ceil((t.maxWaveTimeoutSeconds * 1000) / t.recheckMs);
    expect(rechecks).toBeLessThan(t.maxReceiveCount);
  });

  it("the services' limits: Lambda's 15 minutes, SQS's 12-h visibility and 1000 receives", () => {
    expect(rulesOf(deriveTimings({ functionTimeoutSeconds: 901, visibilityTimeoutSeconds: 43_200 }))).toEqual(
      [expect.stringMatching(/^functionTimeout: is 901 s; Lambda accepts whole seconds from 1 to 900/)],
    );
    expect(rulesOf(deriveTimings({ visibilityTimeoutSeconds: 43_201 }))).toEqual([
      expect.stringMatching(/^queueVisibilityTimeout: is 43201 s; SQS accepts/),
    ]);
    expect(rulesOf(deriveTimings({ maxWaveTimeoutSeconds: 3 * 3600 }))).toEqual([
      expect.stringMatching(
        /^maxReceiveCount\+maxWaveTimeout: maxReceiveCount is 1090; SQS accepts an integer from 1 to 1000/,
      ),
    ]);
    expect(rulesOf(deriveTimings({ maxWaveTimeoutSeconds: 9900 }))).toEqual([]);
  });
});
