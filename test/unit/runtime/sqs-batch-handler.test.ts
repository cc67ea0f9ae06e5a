import { describe, expect, it } from 'vitest';
import { done, dropped, requeueAfter, retry, stop } from '../../../domain/runtime/outcome.ts';
import type { Outcome } from '../../../domain/runtime/outcome.ts';
import { queueMessageBody } from '../../../domain/runtime/queue-message.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { createLogger } from '../../../platform/logger.ts';
import { createSqsBatchHandler } from '../../../functions/runtime/sqs-batch-handler.ts';
import type { RecordHandler, SqsBatchHandlerOptions } from '../../../functions/runtime/sqs-batch-handler.ts';
import { queueUrlFromArn } from '../../../functions/runtime/sqs-event.ts';
import type { SQSEvent, SQSRecord } from '../../../functions/runtime/sqs-event.ts';
import { recordsToDelete } from '../../../dev/sqs-poller.ts';

const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:123456789012:convoy-reconcile';

function message(name: string, overrides: Partial<QueueMessage> = {}): QueueMessage {
  return {
    v: 1,
    loop: 'reconcile',
    namespace: 'shop',
    name,
    uid: `uid-${name}`,
    cause: 'timer',
    sentAt: '2025-06-01T12:00:00Z',
    ...overrides,
  };
}

function record(messageId: string, body: string, receiveCount = 1): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
      SentTimestamp: '1748779200000',
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: '1748779200001',
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: QUEUE_ARN,
    awsRegion: 'eu-west-1',
  };
}

/** A handler wired to an in-memory visibility port and a captured log. */
function harness(
  handleRecord: RecordHandler,
  options: Partial<Omit<SqsBatchHandlerOptions, 'handleRecord' | 'sqs' | 'logger'>> & {
    failVisibility?: boolean;
  } = {},
) {
  const visibilityCalls: { queueUrl: string; receiptHandle: string; seconds: number }[] = [];
  const lines: Record<string, unknown>[] = [];
  const handler = createSqsBatchHandler({
    loop: 'reconcile',
    handleRecord,
    sqs: {
      changeVisibility: (queueUrl, receiptHandle, seconds) => {
        visibilityCalls.push({ queueUrl, receiptHandle, seconds });
        return options.failVisibility === true
          ? Promise.reject(new Error('ReceiptHandleIsInvalid'))
          : Promise.resolve();
      },
    },
    logger: createLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
    ...options,
  });
  return { handler, visibilityCalls, lines };
}

const byName =
  (outcomes: Record<string, Outcome | Error>): RecordHandler =>
  (m) => {
    const outcome = outcomes[m.name];
    if (outcome === undefined) return Promise.reject(new Error(`no outcome for ${m.name}`));
    return outcome instanceof Error ? Promise.reject(outcome) : Promise.resolve(outcome);
  };

const event = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

describe('createSqsBatchHandler', () => {
  it('done, stop and dropped records succeed without touching visibility', async () => {
    const { handler, visibilityCalls } = harness(byName({ a: done(), b: stop(), c: dropped('superseded') }));
    const response = await handler(
      event(
        record('1', queueMessageBody(message('a'))),
        record('2', queueMessageBody(message('b'))),
        record('3', queueMessageBody(message('c'))),
      ),
    );
    expect(response).toEqual({ batchItemFailures: [] });
    expect(visibilityCalls).toEqual([]);
  });

  it("a run's annotations (when it held its Lease) are on its outcome line", async () => {
    const { handler, lines } = harness((_m, ctx) => {
      ctx.annotate?.({ leaseHeldFrom: 10, leaseHeldUntil: 20 });
      return Promise.resolve(done());
    });
    await handler(event(record('1', queueMessageBody(message('a')))));
    const outcomeLine = lines.find((l) => l['msg'] === 'done');
    expect(outcomeLine).toMatchObject({ leaseHeldFrom: 10, leaseHeldUntil: 20, name: 'a' });
  });

  it('requeueAfter changes visibility on the queue URL derived from eventSourceARN and fails the record', async () => {
    const { handler, visibilityCalls } = harness(
      byName({ a: requeueAfter(10_000, 'wave 1 progressing'), b: done() }),
    );
    const response = await handler(
      event(record('1', queueMessageBody(message('a'))), record('2', queueMessageBody(message('b')))),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '1' }] });
    expect(visibilityCalls).toEqual([
      {
        queueUrl: 'https://sqs.eu-west-1.amazonaws.com/123456789012/convoy-reconcile',
        receiptHandle: 'rh-1',
        seconds: 10,
      },
    ]);
  });

  it('retry backs off by the receive count, with retryPolicyOf when the outcome has no policy', async () => {
    const { handler, visibilityCalls } = harness(byName({ a: retry(new Error('apply conflict')) }), {
      retryPolicyOf: () => ({ initialMs: 1_000, factor: 3, maxMs: 60_000 }),
    });
    await handler(event(record('1', queueMessageBody(message('a')), 3)));
    expect(visibilityCalls.map((call) => call.seconds)).toEqual([9]);
  });

  it('a handler that throws is retry(error): default backoff, logged at error level', async () => {
    const { handler, visibilityCalls, lines } = harness(byName({ a: new Error('kube API unreachable') }));
    const response = await handler(event(record('1', queueMessageBody(message('a')), 9)));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '1' }] });
    // 2 s × 2^8 = 512 s, capped at 300 s, less up to half of it (jitter): 150–300 s.
    expect(visibilityCalls).toHaveLength(1);
    expect(visibilityCalls[0]?.seconds).toBeGreaterThanOrEqual(150);
    expect(visibilityCalls[0]?.seconds).toBeLessThanOrEqual(300);
    const line = lines.find((l) => l['msg'] === 'record handler threw; retrying with backoff');
    expect(line?.['level']).toBe('error');
    expect(line?.['error']).toMatchObject({ name: 'Error', message: 'kube API unreachable' });
  });

  it('a thrown non-Error value becomes an Error', async () => {
    const { handler, lines } = harness(() =>
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- plays a dependency that rejects with a string
      Promise.reject('plain string'),
    );
    await handler(event(record('1', queueMessageBody(message('a')))));
    const line = lines.find((l) => l['msg'] === 'record handler threw; retrying with backoff');
    expect(line?.['error']).toMatchObject({ name: 'Error' });
    expect((line?.['error'] as { message: string }).message).toContain('plain string');
  });

  it.each([
    ['not JSON', '{oops', /not JSON/],
    ['a wrong version', JSON.stringify({ ...message('a'), v: 2 }), /\bv: /],
    ['a missing field', JSON.stringify({ ...message('a'), uid: undefined }), /\buid: /],
    ['a message for another loop', queueMessageBody(message('a', { loop: 'drift' })), /for the drift loop/],
  ])(
    'a body with %s fails alone, comes back after 1 s (quickly to the DLQ), and the reason is logged',
    async (_case, body, reason) => {
      let handled = 0;
      const { handler, visibilityCalls, lines } = harness(() => {
        handled += 1;
        return Promise.resolve(done());
      });
      const response = await handler(
        event(record('bad', body), record('good', queueMessageBody(message('b')))),
      );
      expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'bad' }] });
      expect(handled).toBe(1);
      expect(visibilityCalls.map((c) => c.seconds)).toEqual([1]);
      const line = lines.find((l) => l['msg'] === 'invalid message left for the dead-letter queue');
      expect(line).toMatchObject({ level: 'warn', messageId: 'bad' });
      expect(line?.['reason']).toMatch(reason);
    },
  );

  it('a failed ChangeMessageVisibility still reports the record as failed and is logged', async () => {
    const { handler, lines } = harness(byName({ a: requeueAfter(2_000, 'hook running') }), {
      failVisibility: true,
    });
    const response = await handler(event(record('1', queueMessageBody(message('a')))));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '1' }] });
    expect(lines).toContainEqual(expect.objectContaining({ level: 'error', visibilitySeconds: 2 }));
  });

  it('a failure in the runtime itself (retryPolicyOf throws) fails only that record', async () => {
    const { handler } = harness(byName({ a: retry(new Error('x')), b: done() }), {
      retryPolicyOf: () => {
        throw new Error('bad policy');
      },
    });
    const response = await handler(
      event(record('1', queueMessageBody(message('a'))), record('2', queueMessageBody(message('b')))),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '1' }] });
  });

  it('queueUrlOf replaces the ARN-derived queue URL', async () => {
    const { handler, visibilityCalls } = harness(byName({ a: requeueAfter(1_000, 'x') }), {
      queueUrlOf: () => 'http://127.0.0.1:4566/000000000000/convoy-reconcile',
    });
    await handler(event(record('1', queueMessageBody(message('a')))));
    expect(visibilityCalls[0]?.queueUrl).toBe('http://127.0.0.1:4566/000000000000/convoy-reconcile');
  });

  it('each record gets its own child logger with loop, messageId, namespace, name, uid and cause', async () => {
    const handle: RecordHandler = async (m, { logger, receiveCount, messageId }) => {
      // Interleave the records so a shared logger would mix up their fields.
      await new Promise((resolve) => setTimeout(resolve, m.name === 'a' ? 20 : 0));
      logger.info('working', { receiveCount, seen: messageId });
      return done();
    };
    const { handler, lines } = harness(handle);
    await handler(
      event(
        record('1', queueMessageBody(message('a', { cause: 'webhook' })), 2),
        record('2', queueMessageBody(message('b'))),
      ),
    );
    const working = lines.filter((line) => line['msg'] === 'working');
    expect(working).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          loop: 'reconcile',
          messageId: '1',
          seen: '1',
          name: 'a',
          namespace: 'shop',
          uid: 'uid-a',
          cause: 'webhook',
          receiveCount: 2,
        }),
        expect.objectContaining({
          loop: 'reconcile',
          messageId: '2',
          seen: '2',
          name: 'b',
          cause: 'timer',
          receiveCount: 1,
        }),
      ]),
    );
  });

  it('records are handled concurrently', async () => {
    let running = 0;
    let peak = 0;
    const { handler } = harness(async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running -= 1;
      return done();
    });
    await handler(
      event(...['a', 'b', 'c'].map((name, i) => record(String(i), queueMessageBody(message(name))))),
    );
    expect(peak).toBe(3);
  });

  it('an empty batch answers with no failures', async () => {
    const { handler } = harness(() => Promise.resolve(done()));
    expect(await handler({ Records: [] })).toEqual({ batchItemFailures: [] });
  });
});

describe('queueUrlFromArn', () => {
  it.each([
    ['arn:aws:sqs:eu-west-1:123456789012:q', 'https://sqs.eu-west-1.amazonaws.com/123456789012/q'],
    ['arn:aws-cn:sqs:cn-north-1:123456789012:q', 'https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q'],
    [
      'arn:aws-us-gov:sqs:us-gov-west-1:123456789012:q',
      'https://sqs.us-gov-west-1.amazonaws.com/123456789012/q',
    ],
  ])('%s → %s', (arn, url) => {
    expect(queueUrlFromArn(arn)).toBe(url);
  });

  it.each([
    'arn:aws:sns:eu-west-1:123456789012:t',
    'arn:aws:sqs:eu-west-1:123456789012',
    'not-an-arn',
    'arn:moon:sqs:x:1:q',
  ])('%s is refused with a hint to pass queueUrlOf', (arn) => {
    expect(() => queueUrlFromArn(arn)).toThrow(/queueUrlOf/);
  });
});

describe('recordsToDelete (how Lambda reads a partial batch response)', () => {
  const batch = event(record('1', 'x'), record('2', 'x'), record('3', 'x'));
  const ids = (verdict: ReturnType<typeof recordsToDelete>) =>
    verdict.ok ? verdict.records.map((r) => r.messageId) : verdict.reason;

  it('records not listed in batchItemFailures are deleted', () => {
    expect(ids(recordsToDelete(batch, { batchItemFailures: [{ itemIdentifier: '2' }] }))).toEqual(['1', '3']);
  });

  it.each([undefined, null, {}, { batchItemFailures: [] }])(
    'a response of %j deletes every record',
    (response) => {
      expect(ids(recordsToDelete(batch, response))).toEqual(['1', '2', '3']);
    },
  );

  it.each([
    [{ batchItemFailures: [{ itemIdentifier: '' }] }, /no itemIdentifier/],
    [{ batchItemFailures: [{ itemIdentifier: null }] }, /no itemIdentifier/],
    [{ batchItemFailures: [{ id: '1' }] }, /no itemIdentifier/],
    [{ batchItemFailures: [{ itemIdentifier: '9' }] }, /"9" is not a messageId/],
    [{ batchItemFailures: 'all' }, /not an array/],
    ['done', /not an object/],
  ])('an invalid response %j fails the whole batch', (response, reason) => {
    const verdict = recordsToDelete(batch, response);
    expect(verdict.ok).toBe(false);
    expect(ids(verdict)).toMatch(reason);
  });
});
