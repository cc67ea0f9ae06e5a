// The event source mapping's handling of one invocation's answer (dev/lambda/batch-semantics.ts),
// as AWS documents it for SQS with and without ReportBatchItemFailures.
import { describe, expect, it } from 'vitest';
import { settleInvocation, splitByPayload } from '../../../dev/lambda/batch-semantics.ts';
import type { SQSEvent, SQSRecord } from '../../../functions/runtime/sqs-event.ts';

const record = (id: string, body = 'x'): SQSRecord => ({
  messageId: id,
  receiptHandle: `rh-${id}`,
  body,
  attributes: {
    ApproximateReceiveCount: '1',
    SentTimestamp: '0',
    SenderId: 's',
    ApproximateFirstReceiveTimestamp: '0',
  },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:q',
  awsRegion: 'us-east-1',
});
const event: SQSEvent = { Records: [record('a'), record('b'), record('c')] };
const ids = (s: ReturnType<typeof settleInvocation>) =>
  s.kind === 'succeeded' ? s.deleted.map((r) => r.messageId) : s.kind;

describe('settleInvocation', () => {
  it('a success with no failures deletes every record (empty list, null, empty body)', () => {
    expect(ids(settleInvocation(event, { body: '{"batchItemFailures":[]}' }, true))).toEqual(['a', 'b', 'c']);
    expect(ids(settleInvocation(event, { body: 'null' }, true))).toEqual(['a', 'b', 'c']);
    expect(ids(settleInvocation(event, { body: '' }, true))).toEqual(['a', 'b', 'c']);
    expect(ids(settleInvocation(event, { body: '{}' }, true))).toEqual(['a', 'b', 'c']);
  });

  it('batchItemFailures: the named records stay, the others are deleted', () => {
    const settled = settleInvocation(event, { body: '{"batchItemFailures":[{"itemIdentifier":"b"}]}' }, true);
    expect(ids(settled)).toEqual(['a', 'c']);
    expect(settled.kind === 'succeeded' && settled.failedItems).toBe(1);
  });

  it('a function error or a timeout fails the whole batch: nothing is deleted', () => {
    expect(settleInvocation(event, { body: '{}', error: { type: 'Error', message: 'boom' } }, true)).toEqual({
      kind: 'batchFailed',
      reason: 'Error: boom',
    });
    expect(
      settleInvocation(
        event,
        {
          body: 'Task timed out after 3.00 seconds',
          error: { type: 'Sandbox.Timedout', message: 'Task timed out after 3.00 seconds' },
        },
        false,
      ).kind,
    ).toBe('batchFailed');
  });

  it('a malformed answer fails the whole batch with ReportBatchItemFailures', () => {
    for (const body of [
      'not json',
      '{"batchItemFailures":"b"}',
      '{"batchItemFailures":[{}]}',
      '{"batchItemFailures":[{"itemIdentifier":""}]}',
      '{"batchItemFailures":[{"itemIdentifier":"zz"}]}',
      '42',
    ]) {
      expect(settleInvocation(event, { body }, true).kind, body).toBe('batchFailed');
    }
  });

  it('without ReportBatchItemFailures the answer is not read: a success deletes the batch', () => {
    expect(
      ids(settleInvocation(event, { body: '{"batchItemFailures":[{"itemIdentifier":"b"}]}' }, false)),
    ).toEqual(['a', 'b', 'c']);
    expect(ids(settleInvocation(event, { body: 'not json' }, false))).toEqual(['a', 'b', 'c']);
  });
});

describe('splitByPayload', () => {
  it('keeps a batch under the limit whole', () => {
    const { parts, undeliverable } = splitByPayload(event, 1_000_000);
    expect(parts.map((p) => p.Records.map((r) => r.messageId))).toEqual([['a', 'b', 'c']]);
    expect(undeliverable).toEqual([]);
  });

  it('splits a batch whose event would exceed the limit, in order', () => {
    const big = {
      Records: [record('a', 'x'.repeat(400)), record('b', 'x'.repeat(400)), record('c', 'x'.repeat(400))],
    };
    const { parts } = splitByPayload(big, 1500);
    expect(parts.map((p) => p.Records.map((r) => r.messageId))).toEqual([['a', 'b'], ['c']]);
    for (const part of parts) expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThanOrEqual(1500);
  });

  it('a record larger than the limit alone is undeliverable; the rest go', () => {
    const { parts, undeliverable } = splitByPayload(
      { Records: [record('a'), record('huge', 'x'.repeat(5000)), record('c')] },
      2000,
    );
    expect(undeliverable.map((r) => r.messageId)).toEqual(['huge']);
    expect(parts.flatMap((p) => p.Records.map((r) => r.messageId))).toEqual(['a', 'c']);
  });
});
