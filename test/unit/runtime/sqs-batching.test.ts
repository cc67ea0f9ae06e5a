/**
 * adapters/sqs/batching.ts on fauxqs with the real @aws-sdk/client-sqs: calls made together go
 * out as SendMessageBatch / ChangeMessageVisibilityBatch requests (counted by a middleware on
 * the client), and every caller learns the fate of its own entry.
 */
import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { startFauxqsSqs, type FauxqsSqs } from '../../harness/fauxqs-sqs.ts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBatchingSqs, SqsEntryError } from '../../../adapters/sqs/batching.ts';

const TEST_TIMEOUT = { timeout: 15_000 };

interface SentRequest {
  command: string;
  queueUrl: string;
  entries: { Id: string; MessageBody?: string; ReceiptHandle?: string }[];
}

let fauxqs: FauxqsSqs | undefined;
let sqs: SQSClient;
/** Every batch request the client sent, in order (the tests' own set-up commands are not batches). */
let requests: SentRequest[] = [];

beforeAll(async () => {
  fauxqs = await startFauxqsSqs();
  ({ sqs } = fauxqs);
  sqs.middlewareStack.add(
    (next, context) => (args) => {
      const input = args.input as { QueueUrl?: string; Entries?: SentRequest['entries'] };
      if (context.commandName?.endsWith('BatchCommand')) {
        requests.push({
          command: context.commandName,
          queueUrl: input.QueueUrl ?? '',
          entries: input.Entries ?? [],
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'countBatchRequests' },
  );
});

beforeEach(() => {
  requests = [];
});

afterAll(async () => {
  await fauxqs?.stop();
});

async function newQueue(visibilityTimeout = 30): Promise<string> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: `convoy-batching-${randomUUID().slice(0, 8)}`,
      Attributes: { VisibilityTimeout: String(visibilityTimeout) },
    }),
  );
  if (QueueUrl === undefined) throw new Error('no queue URL');
  return QueueUrl;
}

/** Receives until `count` messages arrived (bounded), leaving them in flight. */
async function receiveAll(queueUrl: string, count: number, timeoutMs = 10_000): Promise<Message[]> {
  const messages: Message[] = [];
  const deadline = Date.now() + timeoutMs;
  while (messages.length < count) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms: ${messages.length} of ${count} messages received`);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    messages.push(...Messages);
  }
  return messages;
}

const sendRequests = (queueUrl?: string) =>
  requests.filter(
    (r) => r.command === 'SendMessageBatchCommand' && (queueUrl === undefined || r.queueUrl === queueUrl),
  );
const visibilityRequests = () => requests.filter((r) => r.command === 'ChangeMessageVisibilityBatchCommand');

const bodies = (n: number, prefix = 'm') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('batched SQS sends and visibility changes on fauxqs', TEST_TIMEOUT, () => {
  it('sends made together go out as one SendMessageBatch, and every message arrives', async () => {
    const queueUrl = await newQueue();
    const batching = createBatchingSqs(sqs);
    await Promise.all(bodies(3).map((b) => batching.sendMessage(queueUrl, b)));
    expect(sendRequests()).toHaveLength(1);
    expect(sendRequests()[0]?.entries.map((e) => e.MessageBody)).toEqual(['m0', 'm1', 'm2']);
    const received = await receiveAll(queueUrl, 3);
    expect(received.map((m) => m.Body).sort()).toEqual(['m0', 'm1', 'm2']);
  });

  it('more than ten sends split into requests of at most ten entries; a full ten goes out without waiting for the linger time', async () => {
    const queueUrl = await newQueue();
    // A linger far beyond the test's timeout: only a full group of ten can have been sent.
    const batching = createBatchingSqs(sqs, 60_000);
    await Promise.all(bodies(20).map((b) => batching.sendMessage(queueUrl, b)));
    expect(sendRequests().map((r) => r.entries.length)).toEqual([10, 10]);

    const soon = createBatchingSqs(sqs);
    await Promise.all(bodies(25, 'n').map((b) => soon.sendMessage(queueUrl, b)));
    expect(sendRequests().map((r) => r.entries.length)).toEqual([10, 10, 10, 10, 5]);
    const received = await receiveAll(queueUrl, 45);
    expect(new Set(received.map((m) => m.Body))).toEqual(new Set([...bodies(20), ...bodies(25, 'n')]));
  });

  it('entries for two queues go out as two requests, one per queue', async () => {
    const first = await newQueue();
    const second = await newQueue();
    const batching = createBatchingSqs(sqs);
    await Promise.all([
      batching.sendMessage(first, 'a0'),
      batching.sendMessage(second, 'b0'),
      batching.sendMessage(first, 'a1'),
      batching.sendMessage(second, 'b1'),
    ]);
    expect(sendRequests()).toHaveLength(2);
    expect(sendRequests(first).map((r) => r.entries.map((e) => e.MessageBody))).toEqual([['a0', 'a1']]);
    expect(sendRequests(second).map((r) => r.entries.map((e) => e.MessageBody))).toEqual([['b0', 'b1']]);
    expect((await receiveAll(first, 2)).map((m) => m.Body).sort()).toEqual(['a0', 'a1']);
    expect((await receiveAll(second, 2)).map((m) => m.Body).sort()).toEqual(['b0', 'b1']);
  });

  it('visibility changes made together go out as one ChangeMessageVisibilityBatch and take effect', async () => {
    const queueUrl = await newQueue(30);
    for (const body of bodies(3))
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    const received = await receiveAll(queueUrl, 3);
    const batching = createBatchingSqs(sqs);
    // Visible again at once: the next receive gets them back although the queue's timeout is 30 s.
    await Promise.all(received.map((m) => batching.changeVisibility(queueUrl, m.ReceiptHandle ?? '', 0)));
    expect(visibilityRequests()).toHaveLength(1);
    expect(visibilityRequests()[0]?.entries).toHaveLength(3);
    expect((await receiveAll(queueUrl, 3)).map((m) => m.Body).sort()).toEqual(['m0', 'm1', 'm2']);
  });

  it('a failed entry rejects only its own caller, with an SqsEntryError naming the code; the others resolve', async () => {
    const queueUrl = await newQueue(30);
    for (const body of bodies(2))
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    const [a, b] = await receiveAll(queueUrl, 2);
    const batching = createBatchingSqs(sqs);
    const results = await Promise.allSettled([
      batching.changeVisibility(queueUrl, a?.ReceiptHandle ?? '', 0),
      batching.changeVisibility(queueUrl, 'not-a-receipt-handle', 0),
      batching.changeVisibility(queueUrl, b?.ReceiptHandle ?? '', 0),
    ]);
    expect(visibilityRequests()).toHaveLength(1);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const failure = (results[1] as PromiseRejectedResult).reason as unknown;
    expect(failure).toBeInstanceOf(SqsEntryError);
    expect((failure as SqsEntryError).code).toBe('ReceiptHandleIsInvalid');
    expect((failure as SqsEntryError).message).toMatch(
      /^ChangeMessageVisibilityBatch: ReceiptHandleIsInvalid/,
    );
    // The two valid changes took effect.
    expect((await receiveAll(queueUrl, 2)).map((m) => m.Body).sort()).toEqual(['m0', 'm1']);
  });

  it('a request that fails as a whole rejects every caller in it, and only those', async () => {
    const queueUrl = await newQueue();
    const missing = queueUrl.replace(/convoy-batching-[^/]+$/, `convoy-missing-${randomUUID().slice(0, 8)}`);
    const batching = createBatchingSqs(sqs);
    const results = await Promise.allSettled([
      batching.sendMessage(missing, 'x0'),
      batching.sendMessage(queueUrl, 'ok'),
      batching.sendMessage(missing, 'x1'),
    ]);
    expect(sendRequests(missing)).toHaveLength(1);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected']);
    for (const r of [results[0], results[2]]) {
      const reason = (r as PromiseRejectedResult).reason as Error;
      expect(reason).not.toBeInstanceOf(SqsEntryError);
      expect(reason.name).toMatch(/QueueDoesNotExist|NonExistentQueue/);
    }
    expect((await receiveAll(queueUrl, 1)).map((m) => m.Body)).toEqual(['ok']);
  });

  it('a lone call waits the linger time, then goes out alone; its delay is carried', async () => {
    const queueUrl = await newQueue();
    const batching = createBatchingSqs(sqs, 100);
    let settled = false;
    const sent = batching.sendMessage(queueUrl, 'alone', 0).then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(requests).toHaveLength(0);
    expect(settled).toBe(false);
    await sent;
    expect(sendRequests()).toHaveLength(1);
    expect(sendRequests()[0]?.entries).toEqual([
      expect.objectContaining({ MessageBody: 'alone', DelaySeconds: 0 }),
    ]);
    expect((await receiveAll(queueUrl, 1)).map((m) => m.Body)).toEqual(['alone']);
  });

  it('large bodies that together exceed what one SQS batch request may carry are split so that every message arrives', async () => {
    const queueUrl = await newQueue();
    const batching = createBatchingSqs(sqs);
    // Ten bodies of 150 KiB: each fits a message, but not ten (nor two) in one request.
    const large = bodies(10).map((b) => b.padEnd(150 * 1024, 'x'));
    const results = await Promise.allSettled(large.map((b) => batching.sendMessage(queueUrl, b)));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(sendRequests().map((r) => r.entries.length)).toEqual(Array<number>(10).fill(1));
    for (const request of sendRequests()) {
      const bytes = request.entries.reduce((sum, e) => sum + Buffer.byteLength(e.MessageBody ?? ''), 0);
      expect(bytes).toBeLessThanOrEqual(256 * 1024);
    }
    const received = await receiveAll(queueUrl, 10);
    expect(received.map((m) => m.Body?.slice(0, 2)).sort()).toEqual(bodies(10).sort());
  });
});
