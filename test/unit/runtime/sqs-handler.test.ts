/**
 * The batch runtime end to end on one machine: fauxqs in-process, the real
 * @aws-sdk/client-sqs, the dev poller (our event source mapping) and the
 * real batch handler. Waits are bounded, never timing-exact.
 */
import { randomUUID } from 'node:crypto';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { startFauxqsSqs, type FauxqsSqs } from '../../harness/fauxqs-sqs.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureQueueWithDlq, sqsVisibilityPort } from '../../../adapters/sqs/queues.ts';
import type { QueueWithDlq } from '../../../adapters/sqs/queues.ts';
import { done, requeueAfter, retry } from '../../../domain/runtime/outcome.ts';
import { queueMessageBody } from '../../../domain/runtime/queue-message.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { createLogger } from '../../../platform/logger.ts';
import type { Logger } from '../../../platform/logger.ts';
import { createSqsBatchHandler } from '../../../functions/runtime/sqs-batch-handler.ts';
import type { RecordHandler, VisibilityPort } from '../../../functions/runtime/sqs-batch-handler.ts';
import type { SQSBatchResponse, SQSEvent } from '../../../functions/runtime/sqs-event.ts';
import { startPoller, toSqsEvent } from '../../../dev/sqs-poller.ts';
import type { BatchHandler, Poller } from '../../../dev/sqs-poller.ts';

// Each fauxqs test finishes in a few seconds; 15 s is the ceiling.
const TEST_TIMEOUT = { timeout: 15_000 };

let fauxqs: FauxqsSqs | undefined;
let sqs: SQSClient;

beforeAll(async () => {
  fauxqs = await startFauxqsSqs();
  ({ sqs } = fauxqs);
});

afterAll(async () => {
  await fauxqs?.stop();
});

function message(name: string): QueueMessage {
  return {
    v: 1,
    loop: 'reconcile',
    namespace: 'shop',
    name,
    uid: `uid-${name}`,
    cause: 'test',
    sentAt: new Date().toISOString(),
  };
}

function capturedLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    logger: createLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
    lines,
  };
}

/** The SDK-backed port, recording each visibility change. */
/** The visibility changes asked for: seconds, and when each request was about to leave (`at`). */
function recordingPort(): {
  port: VisibilityPort;
  seconds: number[];
  changes: { seconds: number; at: number }[];
} {
  const real = sqsVisibilityPort(sqs);
  const seconds: number[] = [];
  const changes: { seconds: number; at: number }[] = [];
  return {
    seconds,
    changes,
    port: {
      changeVisibility: async (queueUrl, receiptHandle, visibilitySeconds) => {
        seconds.push(visibilitySeconds);
        changes.push({ seconds: visibilitySeconds, at: Date.now() });
        await real.changeVisibility(queueUrl, receiptHandle, visibilitySeconds);
      },
    },
  };
}

async function newQueue(options: {
  maxReceiveCount: number;
  visibilityTimeout: number;
}): Promise<QueueWithDlq> {
  return ensureQueueWithDlq(sqs, `convoy-test-${randomUUID().slice(0, 8)}`, options);
}

/** Messages in the queue in any state: ready, in flight or delayed. */
async function queueDepth(queueUrl: string): Promise<number> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages) +
    Number(Attributes.ApproximateNumberOfMessagesNotVisible) +
    Number(Attributes.ApproximateNumberOfMessagesDelayed)
  );
}

async function eventually(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a poller and stops it when `body` ends, however it ends. */
async function withPoller(
  queue: QueueWithDlq,
  handler: BatchHandler,
  logger: Logger,
  body: (poller: Poller) => Promise<void>,
): Promise<void> {
  const poller = startPoller({
    sqs,
    queueUrl: queue.queueUrl,
    queueArn: queue.queueArn,
    handler,
    logger,
    batchSize: 10,
    waitTimeSeconds: 1,
  });
  try {
    await body(poller);
  } finally {
    await poller.stop();
  }
}

describe('the SQS batch runtime on fauxqs', TEST_TIMEOUT, () => {
  it('a batch of 3 with one malformed body, on a port that cannot copy it to the DLQ: the 2 valid records are deleted, the malformed one reaches the DLQ after maxReceiveCount receives', async () => {
    const queue = await newQueue({ maxReceiveCount: 2, visibilityTimeout: 1 });
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queue.queueUrl,
        Entries: [
          { Id: 'a', MessageBody: queueMessageBody(message('a')) },
          { Id: 'bad', MessageBody: '{"v": 1, "loop": "reconcile"' },
          { Id: 'b', MessageBody: queueMessageBody(message('b')) },
        ],
      }),
    );

    const handled: string[] = [];
    const { port, seconds } = recordingPort();
    const { logger, lines } = capturedLogger();
    const batches: SQSEvent[] = [];
    const handler = createSqsBatchHandler({
      loop: 'reconcile',
      handleRecord: (m) => {
        handled.push(m.name);
        return Promise.resolve(done());
      },
      sqs: port,
      logger,
    });

    await withPoller(
      queue,
      (event) => {
        batches.push(event);
        return handler(event);
      },
      logger,
      () =>
        eventually(async () => (await queueDepth(queue.dlqUrl)) === 1, 'the malformed message in the DLQ'),
    );

    expect(batches[0]?.Records).toHaveLength(3);
    expect(handled.sort()).toEqual(['a', 'b']);
    expect(await queueDepth(queue.queueUrl)).toBe(0);
    expect(seconds).toEqual([1, 1]); // the malformed record comes back after 1 s on each of its receives
    const invalid = lines.filter((line) => line['msg'] === 'invalid message left for the dead-letter queue');
    expect(invalid.map((line) => line['receiveCount'])).toEqual([1, 2]);
    expect(invalid[0]?.['reason']).toMatch(/not JSON/);

    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queue.dlqUrl, MaxNumberOfMessages: 10 }),
    );
    expect(Messages.map((m) => m.Body)).toEqual(['{"v": 1, "loop": "reconcile"']);
  });

  it("requeueAfter(2000): the record comes back no earlier than 2 s after the visibility change, well before the queue's own 30 s, with ApproximateReceiveCount 2", async () => {
    // A long queue visibility timeout, so only the handler's ChangeMessageVisibility can bring it back early.
    const queue = await newQueue({ maxReceiveCount: 5, visibilityTimeout: 30 });
    await sqs.send(
      new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: queueMessageBody(message('a')) }),
    );

    const { port, seconds, changes } = recordingPort();
    const { logger } = capturedLogger();
    // Default queueUrlOf: the URL is derived from eventSourceARN exactly as on Lambda
    // (https://sqs.us-east-1.amazonaws.com/000000000000/<name>); fauxqs resolves it by region and name.
    const handler = createSqsBatchHandler({
      loop: 'reconcile',
      handleRecord: () => Promise.resolve(requeueAfter(2_000, 'wave 1 progressing')),
      sqs: port,
      logger,
    });

    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.queueUrl,
        MessageSystemAttributeNames: ['All'],
        WaitTimeSeconds: 1,
      }),
    );
    const response = await handler(toSqsEvent(received.Messages ?? [], { queueArn: queue.queueArn }));
    expect(response.batchItemFailures).toHaveLength(1);
    expect(seconds).toEqual([2]);

    // A long poll answers as soon as the message is visible again: when it answers is when the
    // queue let the message go. Its 10 s wait is only a safety net, well short of the queue's 30 s.
    const later = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.queueUrl,
        MessageSystemAttributeNames: ['All'],
        WaitTimeSeconds: 10,
      }),
    );
    const heldMs = Date.now() - (changes[0]?.at ?? Number.NaN);
    expect(later.Messages ?? []).toHaveLength(1);
    expect(later.Messages?.[0]?.MessageId).toBe(received.Messages?.[0]?.MessageId);
    expect(later.Messages?.[0]?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(heldMs).toBeGreaterThanOrEqual(2_000);
  });

  it(
    'retry backs off per policy (1 s, then 2 s) until done; a handler that throws counts as retry',
    { timeout: 30_000 },
    async () => {
      const queue = await newQueue({ maxReceiveCount: 5, visibilityTimeout: 30 });
      await sqs.send(
        new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: queueMessageBody(message('a')) }),
      );

      const calls: { receiveCount: number; at: number }[] = [];
      const handleRecord: RecordHandler = (_m, { receiveCount }) => {
        calls.push({ receiveCount, at: Date.now() });
        if (receiveCount === 1) return Promise.reject(new Error('kube API unreachable'));
        if (receiveCount === 2) return Promise.resolve(retry(new Error('apply conflict')));
        return Promise.resolve(done());
      };
      const { port, seconds, changes } = recordingPort();
      const { logger } = capturedLogger();
      const handler = createSqsBatchHandler({
        loop: 'reconcile',
        handleRecord,
        sqs: port,
        logger,
        retryPolicyOf: () => ({ initialMs: 1_000, factor: 2, maxMs: 60_000 }),
        // The resolver path, as `convoy dev` may use it: the emulator's own queue URL.
        queueUrlOf: () => queue.queueUrl,
      });

      // The wait is a safety net (the backoffs take 3 s) and shorter than the queue's own 30 s, so
      // the redeliveries can only come from the visibility changes.
      await withPoller(queue, handler, logger, () =>
        eventually(
          async () => calls.length === 3 && (await queueDepth(queue.queueUrl)) === 0,
          'three attempts and a delete',
          20_000,
        ),
      );

      expect(calls.map((call) => call.receiveCount)).toEqual([1, 2, 3]);
      expect(seconds).toEqual([1, 2]);
      // Each attempt came no earlier than the backoff the one before it asked for.
      changes.forEach((change, i) => {
        expect((calls[i + 1]?.at ?? Number.NaN) - change.at).toBeGreaterThanOrEqual(change.seconds * 1000);
      });
    },
  );
});

describe('the dev poller (a local event source mapping)', TEST_TIMEOUT, () => {
  it('builds the record Lambda would: ids, body, system and message attributes, eventSourceARN and awsRegion', async () => {
    const queue = await newQueue({ maxReceiveCount: 5, visibilityTimeout: 5 });
    const body = queueMessageBody(message('a'));
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queue.queueUrl,
        MessageBody: body,
        MessageAttributes: {
          traceparent: { DataType: 'String', StringValue: '00-abc-def-01' },
          blob: { DataType: 'Binary', BinaryValue: new Uint8Array([1, 2, 3]) },
        },
      }),
    );
    const events: SQSEvent[] = [];
    const { logger } = capturedLogger();
    await withPoller(
      queue,
      (event) => {
        events.push(event);
        return Promise.resolve({ batchItemFailures: [] });
      },
      logger,
      () =>
        eventually(
          async () => events.length === 1 && (await queueDepth(queue.queueUrl)) === 0,
          'one batch deleted',
        ),
    );
    const record = events[0]?.Records[0];
    expect(record).toMatchObject({
      body,
      eventSource: 'aws:sqs',
      eventSourceARN: queue.queueArn,
      awsRegion: 'us-east-1',
      attributes: { ApproximateReceiveCount: '1', SenderId: expect.any(String) as string },
      messageAttributes: {
        traceparent: {
          stringValue: '00-abc-def-01',
          stringListValues: [],
          binaryListValues: [],
          dataType: 'String',
        },
        blob: { binaryValue: 'AQID', stringListValues: [], binaryListValues: [], dataType: 'Binary' },
      },
    });
    expect(record?.messageId).toMatch(/\S/);
    expect(record?.receiptHandle).toMatch(/\S/);
    expect(record?.md5OfBody).toMatch(/^[0-9a-f]{32}$/);
    expect(Number(record?.attributes.SentTimestamp)).toBeGreaterThan(0);
    expect(Number(record?.attributes.ApproximateFirstReceiveTimestamp)).toBeGreaterThan(0);
  });

  it('a handler that throws deletes nothing: the whole batch comes back after the visibility timeout', async () => {
    const queue = await newQueue({ maxReceiveCount: 5, visibilityTimeout: 1 });
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: 'x' }));
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: 'y' }));
    const seen: string[] = [];
    const { logger, lines } = capturedLogger();
    let invocations = 0;
    const handler = (event: SQSEvent): Promise<SQSBatchResponse> => {
      invocations += 1;
      for (const record of event.Records)
        seen.push(`${record.body}#${record.attributes.ApproximateReceiveCount}`);
      return invocations === 1
        ? Promise.reject(new Error('function crashed'))
        : Promise.resolve({ batchItemFailures: [] });
    };
    await withPoller(queue, handler, logger, () =>
      eventually(
        async () => seen.length >= 4 && (await queueDepth(queue.queueUrl)) === 0,
        'redelivery and delete',
      ),
    );
    expect(seen.sort()).toEqual(['x#1', 'x#2', 'y#1', 'y#2']);
    expect(lines.find((l) => String(l['msg']).includes('handler threw'))?.['level']).toBe('error');
  });

  it('with concurrency 2, a batch that waits does not hold up the next message of the queue', async () => {
    const queue = await newQueue({ maxReceiveCount: 5, visibilityTimeout: 30 });
    const { logger } = capturedLogger();
    let release: () => void = () => undefined;
    const slowDone = new Promise<void>((resolve) => (release = resolve));
    const handled: string[] = [];
    const poller = startPoller({
      sqs,
      queueUrl: queue.queueUrl,
      queueArn: queue.queueArn,
      handler: async (event) => {
        for (const record of event.Records) {
          if (record.body === 'slow') await slowDone;
          handled.push(record.body);
        }
        return { batchItemFailures: [] };
      },
      logger,
      batchSize: 1,
      waitTimeSeconds: 1,
      concurrency: 2,
    });
    try {
      await sqs.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: 'slow' }));
      await sleep(300);
      await sqs.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: 'fast' }));
      await eventually(() => handled.includes('fast'), 'the fast message handled while the slow batch waits');
      expect(handled).toEqual(['fast']);
    } finally {
      release();
      await poller.stop();
    }
    expect(handled).toEqual(['fast', 'slow']);
  });

  it('stop() aborts the long poll in flight and resolves promptly', async () => {
    const queue = await newQueue({ maxReceiveCount: 5, visibilityTimeout: 5 });
    const { logger } = capturedLogger();
    const poller = startPoller({
      sqs,
      queueUrl: queue.queueUrl,
      queueArn: queue.queueArn,
      handler: () => Promise.resolve({ batchItemFailures: [] }),
      logger,
      waitTimeSeconds: 20,
    });
    await sleep(200); // let the long poll start
    const started = Date.now();
    await poller.stop();
    // Aborted, not waited out: a long poll left to run would hold stop() for its 20 s.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses a batch size ReceiveMessage cannot deliver', () => {
    const { logger } = capturedLogger();
    expect(() =>
      startPoller({
        sqs,
        queueUrl: 'u',
        queueArn: 'arn:aws:sqs:us-east-1:000000000000:q',
        handler: () => Promise.resolve(undefined),
        logger,
        batchSize: 11,
      }),
    ).toThrow(/batchSize must be an integer from 1 to 10, got 11/);
  });
});

describe('ensureQueueWithDlq', TEST_TIMEOUT, () => {
  it('is idempotent and brings an existing queue in line with new options', async () => {
    const name = `convoy-test-${randomUUID().slice(0, 8)}`;
    const first = await ensureQueueWithDlq(sqs, name, { maxReceiveCount: 3, visibilityTimeout: 30 });
    const second = await ensureQueueWithDlq(sqs, name, { maxReceiveCount: 7, visibilityTimeout: 60 });
    expect(second).toEqual(first);
    expect(first.dlqArn).toBe(`arn:aws:sqs:us-east-1:000000000000:${name}-dlq`);
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: first.queueUrl,
        AttributeNames: ['VisibilityTimeout', 'RedrivePolicy'],
      }),
    );
    expect(Attributes.VisibilityTimeout).toBe('60');
    expect(JSON.parse(Attributes.RedrivePolicy ?? '{}')).toEqual({
      deadLetterTargetArn: first.dlqArn,
      maxReceiveCount: '7',
    });
  });

  it('refuses a maxReceiveCount SQS would refuse, naming it', async () => {
    await expect(ensureQueueWithDlq(sqs, 'q', { maxReceiveCount: 0, visibilityTimeout: 30 })).rejects.toThrow(
      /maxReceiveCount must be an integer from 1 to 1000, got 0/,
    );
  });
});
