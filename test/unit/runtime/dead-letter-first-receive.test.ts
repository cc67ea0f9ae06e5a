/**
 * A message that can never succeed goes to the dead-letter queue at its first receive; valid work
 * keeps its retries. fauxqs over the real SQS wire protocol, the real @aws-sdk/client-sqs, the dev
 * poller as the event source mapping, and the batch handler with the port the functions compose
 * (sqsVisibilityPort with batching, as functions/runtime/loop-handler.ts builds it).
 */
import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBatchingSqs } from '../../../adapters/sqs/batching.ts';
import { DeadLetterAttribute } from '../../../adapters/sqs/dead-letter.ts';
import { ensureQueueWithDlq, sqsVisibilityPort, type QueueWithDlq } from '../../../adapters/sqs/queues.ts';
import { done, retry } from '../../../domain/runtime/outcome.ts';
import { queueMessageBody, type QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { createLogger, type Logger } from '../../../platform/logger.ts';
import { createSqsBatchHandler, type RecordHandler } from '../../../functions/runtime/sqs-batch-handler.ts';
import type { SQSEvent } from '../../../functions/runtime/sqs-event.ts';
import { startPoller } from '../../../dev/sqs-poller.ts';
import { startFauxqsSqs, type FauxqsSqs } from '../../harness/fauxqs-sqs.ts';

let fauxqs: FauxqsSqs;

beforeAll(async () => {
  fauxqs = await startFauxqsSqs();
});

afterAll(async () => {
  await fauxqs?.stop();
});

const message = (name: string, loop: QueueMessage['loop'] = 'reconcile'): QueueMessage => ({
  v: 1,
  loop,
  namespace: 'shop',
  name,
  uid: `uid-${name}`,
  cause: 'test',
  sentAt: new Date().toISOString(),
});

function capturedLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    logger: createLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
    lines,
  };
}

/** The default timings' maxReceiveCount is 190; a large one here shows the DLQ is not reached through it. */
const newQueue = (name = `convoy-dlq-${randomUUID().slice(0, 8)}`): Promise<QueueWithDlq> =>
  ensureQueueWithDlq(fauxqs.sqs, name, { maxReceiveCount: 190, visibilityTimeout: 30 });

async function depth(queueUrl: string): Promise<number> {
  const { Attributes = {} } = await fauxqs.sqs.send(
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

async function deadLetters(queue: QueueWithDlq, count: number): Promise<Message[]> {
  const found: Message[] = [];
  const deadline = Date.now() + 10_000;
  while (found.length < count) {
    if (Date.now() > deadline)
      throw new Error(`only ${found.length} of ${count} messages reached the dead-letter queue in 10 s`);
    const { Messages = [] } = await fauxqs.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queue.dlqUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 60,
        MessageAttributeNames: ['All'],
      }),
    );
    found.push(...Messages);
  }
  return found;
}

/** The handler as the functions compose it, on a poller of `queue`, with every batch recorded. */
function run(queue: QueueWithDlq, handleRecord: RecordHandler) {
  const { logger, lines } = capturedLogger();
  const batches: SQSEvent[] = [];
  const handler = createSqsBatchHandler({
    loop: 'reconcile',
    handleRecord,
    sqs: sqsVisibilityPort(fauxqs.sqs, createBatchingSqs(fauxqs.sqs)),
    logger,
    queueUrlOf: () => queue.queueUrl,
  });
  const poller = startPoller({
    sqs: fauxqs.sqs,
    queueUrl: queue.queueUrl,
    queueArn: queue.queueArn,
    handler: (event) => {
      batches.push(event);
      return handler(event);
    },
    logger,
    waitTimeSeconds: 1,
  });
  const receivesOf = (messageId: string | undefined) =>
    batches.flatMap((b) => b.Records).filter((r) => r.messageId === messageId);
  return { lines, batches, receivesOf, stop: () => poller.stop() };
}

describe('invalid queue messages', { timeout: 30_000 }, () => {
  it('a body that does not parse, and one for another loop, are in the dead-letter queue after one receive each, with one log line each; the valid message beside them is done', async () => {
    const queue = await newQueue();
    const send = async (body: string) =>
      (await fauxqs.sqs.send(new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: body })))
        .MessageId;
    const garbage = '{"v":1,"loop":"reconcile", this is not json';
    const garbageId = await send(garbage);
    const wrongLoop = queueMessageBody(message('elsewhere', 'health'));
    const wrongLoopId = await send(wrongLoop);
    const validId = await send(queueMessageBody(message('fine')));
    const handled: string[] = [];
    const runtime = run(queue, (m) => {
      handled.push(m.name);
      return Promise.resolve(done());
    });
    try {
      const dead = await deadLetters(queue, 2);
      const bySource = new Map(
        dead.map((m) => [m.MessageAttributes?.[DeadLetterAttribute.sourceMessageId]?.StringValue, m]),
      );
      expect(bySource.get(garbageId)?.Body).toBe(garbage);
      expect(bySource.get(garbageId)?.MessageAttributes?.[DeadLetterAttribute.reason]?.StringValue).toMatch(
        /not JSON/,
      );
      expect(bySource.get(wrongLoopId)?.Body).toBe(wrongLoop);
      expect(bySource.get(wrongLoopId)?.MessageAttributes?.[DeadLetterAttribute.reason]?.StringValue).toMatch(
        /for the health loop but arrived at the reconcile function/,
      );
      expect(bySource.get(garbageId)?.MessageAttributes?.[DeadLetterAttribute.sourceQueue]?.StringValue).toBe(
        queue.queueUrl,
      );
      // Received once each, acknowledged: nothing of the three is left in the queue, in flight or waiting.
      const deadline = Date.now() + 10_000;
      while ((await depth(queue.queueUrl)) > 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(await depth(queue.queueUrl)).toBe(0);
      expect(runtime.receivesOf(garbageId).map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['1']);
      expect(runtime.receivesOf(wrongLoopId).map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['1']);
      expect(handled).toEqual(['fine']);
      expect(runtime.receivesOf(validId)).toHaveLength(1);
      const lines = (id: string | undefined) => runtime.lines.filter((l) => l['messageId'] === id);
      expect(lines(garbageId)).toEqual([
        expect.objectContaining({
          level: 'warn',
          msg: 'invalid message moved to the dead-letter queue',
          receiveCount: 1,
          reason: expect.stringMatching(/not JSON/) as unknown,
        }),
      ]);
      expect(lines(wrongLoopId)).toEqual([
        expect.objectContaining({
          level: 'warn',
          msg: 'invalid message moved to the dead-letter queue',
          receiveCount: 1,
        }),
      ]);
    } finally {
      await runtime.stop();
    }
  });

  it('a queue without a dead-letter queue: the copy fails, the record is left for redelivery after 1 s as before, and the reason is logged', async () => {
    const { QueueUrl: queueUrl = '' } = await fauxqs.sqs.send(
      new CreateQueueCommand({
        QueueName: `convoy-nodlq-${randomUUID().slice(0, 8)}`,
        Attributes: { VisibilityTimeout: '30' },
      }),
    );
    const { Attributes = {} } = await fauxqs.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    const queue: QueueWithDlq = { queueUrl, queueArn: Attributes.QueueArn ?? '', dlqUrl: '', dlqArn: '' };
    const id = (
      await fauxqs.sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'not json' }))
    ).MessageId;
    const runtime = run(queue, () => Promise.resolve(done()));
    try {
      const deadline = Date.now() + 10_000;
      while (runtime.receivesOf(id).length < 2 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      // Back after 1 s, not the queue's 30 s: the redrive policy (when there is one) still gets it quickly.
      expect(
        runtime
          .receivesOf(id)
          .map((r) => r.attributes.ApproximateReceiveCount)
          .slice(0, 2),
      ).toEqual(['1', '2']);
      const first = runtime.lines.find((l) => l['messageId'] === id && l['receiveCount'] === 1);
      expect(first).toMatchObject({
        msg: 'invalid message left for the dead-letter queue: copying it there failed',
        reason: expect.stringMatching(/not JSON/) as unknown,
      });
      expect(JSON.stringify(first?.['error'])).toMatch(/has no RedrivePolicy/);
    } finally {
      await runtime.stop();
    }
  });
});

describe('valid work keeps its retries', { timeout: 30_000 }, () => {
  it('a valid message failing transiently comes back after its backoff (3 s, then 6 s), with the receive count rising, and is done; never in the dead-letter queue', async () => {
    const queue = await newQueue();
    const id = (
      await fauxqs.sqs.send(
        new SendMessageCommand({ QueueUrl: queue.queueUrl, MessageBody: queueMessageBody(message('flaky')) }),
      )
    ).MessageId;
    const policy = { initialMs: 3_000, factor: 2, maxMs: 60_000 };
    const calls: { receiveCount: number; at: number }[] = [];
    const runtime = run(queue, (_m, { receiveCount }) => {
      calls.push({ receiveCount, at: Date.now() });
      return Promise.resolve(
        receiveCount < 3 ? retry(new Error('the Git server answered 503'), policy) : done(),
      );
    });
    try {
      const deadline = Date.now() + 25_000;
      while (calls.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(calls.map((c) => c.receiveCount)).toEqual([1, 2, 3]);
      // Each redelivery no earlier than its backoff: the queue held the message for it.
      expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(3_000);
      expect(calls[2].at - calls[1].at).toBeGreaterThanOrEqual(6_000);
      const retries = runtime.lines.filter(
        (l) => l['messageId'] === id && l['msg'] === 'failed; retrying with backoff',
      );
      expect(retries.map((l) => l['visibilitySeconds'])).toEqual([3, 6]);
      expect(runtime.lines.filter((l) => String(l['msg']).includes('dead-letter'))).toEqual([]);
      expect(await depth(queue.dlqUrl)).toBe(0);
    } finally {
      await runtime.stop();
    }
  });
});
