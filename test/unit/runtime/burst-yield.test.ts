/**
 * Yielding to a reconcile burst (domain/runtime/burst-yield.ts and
 * functions/runtime/burst-guard.ts): while the reconcile queue holds a backlog, observer checks
 * and reconcile rechecks wait before any request; first deliveries of the reconcile, changes, and
 * messages past their age cap run. Pure: the backlog is a function, the handler a recorder.
 */
import { describe, expect, it } from 'vitest';
import {
  burstWaitMs,
  DEFAULT_BURST_POLICY,
  noticesWaitForRolloutEnd,
  type BurstYieldInput,
} from '../../../domain/runtime/burst-yield.ts';
import { done, requeueAfter } from '../../../domain/runtime/outcome.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { toSqsAction } from '../../../adapters/sqs/outcome-actions.ts';
import { withBurstYield } from '../../../functions/runtime/burst-guard.ts';
import { createLogger } from '../../../platform/logger.ts';
import type { RecordContext } from '../../../functions/runtime/sqs-batch-handler.ts';
import type { SQSRecord } from '../../../functions/runtime/sqs-event.ts';

const NOW = new Date('2026-12-03T12:00:00Z');
const input = (over: Partial<BurstYieldInput> = {}): BurstYieldInput => ({
  loop: 'health',
  backlog: 500,
  receiveCount: 1,
  announcesChange: false,
  sentAt: new Date(NOW.getTime() - 5_000),
  now: NOW,
  spreadKey: 'uid-1',
  ...over,
});

describe('burstWaitMs', () => {
  it('drift and health wait while the backlog is at or over the threshold, any delivery; under it they run', () => {
    for (const loop of ['drift', 'health'] as const) {
      expect(burstWaitMs(input({ loop }))).toBeGreaterThan(0);
      expect(burstWaitMs(input({ loop, backlog: DEFAULT_BURST_POLICY.backlogThreshold }))).toBeGreaterThan(0);
      expect(
        burstWaitMs(input({ loop, backlog: DEFAULT_BURST_POLICY.backlogThreshold - 1 })),
      ).toBeUndefined();
      expect(burstWaitMs(input({ loop, receiveCount: 4 }))).toBeGreaterThan(0);
    }
  });

  it('reconcile: a first delivery (the burst itself) and a redelivery announcing a change run; a recheck or retry waits', () => {
    expect(burstWaitMs(input({ loop: 'reconcile', receiveCount: 1 }))).toBeUndefined();
    expect(burstWaitMs(input({ loop: 'reconcile', receiveCount: 2, announcesChange: true }))).toBeUndefined();
    expect(burstWaitMs(input({ loop: 'reconcile', receiveCount: 2 }))).toBeGreaterThan(0);
  });

  it('an unreadable backlog, an unknown or future send time, and a message past its age cap run now', () => {
    expect(burstWaitMs(input({ backlog: undefined }))).toBeUndefined();
    expect(burstWaitMs(input({ sentAt: undefined }))).toBeUndefined();
    expect(burstWaitMs(input({ sentAt: new Date(Number.NaN) }))).toBeUndefined();
    expect(burstWaitMs(input({ sentAt: new Date(NOW.getTime() + 1_000) }))).toBeUndefined();
    expect(
      burstWaitMs(input({ sentAt: new Date(NOW.getTime() - DEFAULT_BURST_POLICY.maxAgeMs) })),
    ).toBeUndefined();
  });

  it('the wait grows with the backlog within [min, max] plus a spread of at most 20 % that is stable per Release', () => {
    const { minWaitMs, maxWaitMs, waitPerMessageMs } = DEFAULT_BURST_POLICY;
    const small = burstWaitMs(input({ backlog: 10 })) ?? 0;
    const middle = burstWaitMs(input({ backlog: 600, spreadKey: 'k' })) ?? 0;
    const huge = burstWaitMs(input({ backlog: 1_000_000 })) ?? 0;
    expect(small).toBeGreaterThanOrEqual(minWaitMs);
    expect(small).toBeLessThanOrEqual(minWaitMs * 1.2);
    expect(middle).toBeGreaterThanOrEqual(600 * waitPerMessageMs);
    expect(middle).toBeLessThanOrEqual(600 * waitPerMessageMs * 1.2);
    expect(huge).toBeGreaterThanOrEqual(maxWaitMs);
    expect(huge).toBeLessThanOrEqual(maxWaitMs * 1.2);
    expect(burstWaitMs(input({ backlog: 600, spreadKey: 'k' }))).toBe(middle);
    const spreads = new Set(
      Array.from({ length: 50 }, (_, i) => burstWaitMs(input({ spreadKey: `uid-${i}` }))),
    );
    expect(spreads.size).toBeGreaterThan(10);
  });

  it('a message near its age cap waits no longer than what is left of it; with less left than the shortest wait it runs now', () => {
    const left = 12_000;
    const sentAt = new Date(NOW.getTime() - (DEFAULT_BURST_POLICY.maxAgeMs - left));
    expect(burstWaitMs(input({ backlog: 100_000, sentAt }))).toBe(left);
    const almost = new Date(
      NOW.getTime() - (DEFAULT_BURST_POLICY.maxAgeMs - DEFAULT_BURST_POLICY.minWaitMs + 1),
    );
    expect(burstWaitMs(input({ backlog: 100_000, sentAt: almost }))).toBeUndefined();
  });
});

describe('noticesWaitForRolloutEnd', () => {
  const recheck = requeueAfter(10_000, 'rollout Progressing');
  const base = { backlog: 50, firstDeploy: true, rolloutProgressing: true, outcome: recheck };
  it('only a first deploy whose rollout will be rechecked, during a burst, holds its notices back', () => {
    expect(noticesWaitForRolloutEnd(base)).toBe(true);
    expect(noticesWaitForRolloutEnd({ ...base, firstDeploy: false })).toBe(false);
    expect(noticesWaitForRolloutEnd({ ...base, rolloutProgressing: false })).toBe(false);
    expect(noticesWaitForRolloutEnd({ ...base, outcome: done() })).toBe(false);
    expect(noticesWaitForRolloutEnd({ ...base, backlog: DEFAULT_BURST_POLICY.backlogThreshold - 1 })).toBe(
      false,
    );
    expect(noticesWaitForRolloutEnd({ ...base, backlog: undefined })).toBe(false);
  });
});

describe('withBurstYield', () => {
  const ctx = (receiveCount = 1): RecordContext => ({
    logger: createLogger({ write: () => undefined }),
    receiveCount,
    messageId: 'm-1',
    record: {} as SQSRecord,
  });
  const message = (over: Partial<QueueMessage> = {}): QueueMessage => ({
    v: 1,
    loop: 'health',
    namespace: 'team-a',
    name: 'web',
    uid: 'u-1',
    cause: 'applied sha256:abc',
    sentAt: new Date(NOW.getTime() - 2_000).toISOString(),
    ...over,
  });
  const rig = (loop: 'reconcile' | 'drift' | 'health', backlog: number | undefined) => {
    const ran: QueueMessage[] = [];
    let reads = 0;
    const handler = withBurstYield(
      (m) => {
        ran.push(m);
        return Promise.resolve(done());
      },
      { loop, reconcileBacklog: () => ((reads += 1), Promise.resolve(backlog)), now: () => NOW },
    );
    return { handler, ran, reads: () => reads };
  };

  it('an observer in a burst waits as a new message (no receive spent) and its handler is never called', async () => {
    const { handler, ran } = rig('drift', 400);
    const outcome = await handler(message({ loop: 'drift' }), ctx());
    expect(outcome).toMatchObject({ kind: 'requeueAfter', asNewMessage: true });
    expect(outcome.kind === 'requeueAfter' && outcome.reason).toMatch(
      /^a reconcile burst: 400 reconcile messages wait for a function; this drift check waits \d+ s$/,
    );
    expect(toSqsAction(outcome, { receiveCount: 1 })).toMatchObject({ ack: true });
    expect(ran).toEqual([]);
  });

  it('a reconcile recheck in a burst waits as a redelivery (still a recheck next time); a first delivery runs without reading the backlog', async () => {
    const { handler, ran, reads } = rig('reconcile', 400);
    const first = await handler(message({ loop: 'reconcile', cause: 'watch: Release added' }), ctx(1));
    expect(first).toEqual(done());
    expect(reads()).toBe(0);
    const recheck = await handler(message({ loop: 'reconcile', cause: 'watch: Release added' }), ctx(3));
    expect(recheck).toMatchObject({ kind: 'requeueAfter' });
    expect(recheck).not.toHaveProperty('asNewMessage');
    expect(toSqsAction(recheck, { receiveCount: 3 })).toMatchObject({ ack: false });
    const push = await handler(message({ loop: 'reconcile', cause: 'git push main abc' }), ctx(3));
    expect(push).toEqual(done());
    expect(ran).toHaveLength(2);
  });

  it("a message with the reconcile's sealed answers waits only while they stay usable (30 s): never past 25 s of age, and not at all with less than the shortest wait left", async () => {
    const applied = { mac: 'm' } as unknown as QueueMessage['applied'];
    const { handler } = rig('health', 100_000);
    const young = await handler(
      message({ applied, sentAt: new Date(NOW.getTime() - 2_000).toISOString() }),
      ctx(),
    );
    expect(young).toMatchObject({ kind: 'requeueAfter', delayMs: 23_000 });
    const old = rig('health', 100_000);
    expect(
      await old.handler(message({ applied, sentAt: new Date(NOW.getTime() - 16_000).toISOString() }), ctx()),
    ).toEqual(done());
    expect(old.ran).toHaveLength(1);
  });

  it('no burst, or a backlog it cannot read: the handler runs', async () => {
    for (const backlog of [0, 9, undefined]) {
      const { handler, ran } = rig('health', backlog);
      expect(await handler(message(), ctx())).toEqual(done());
      expect(ran).toHaveLength(1);
    }
  });
});
