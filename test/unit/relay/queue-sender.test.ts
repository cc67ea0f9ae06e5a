import type {
  SendMessageBatchCommand,
  SendMessageBatchCommandOutput,
  SendMessageBatchRequest,
} from '@aws-sdk/client-sqs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { parseQueueMessage } from '../../../domain/runtime/queue-message.ts';
import { createLogger } from '../../../platform/logger.ts';
import { createRelayMetrics } from '../../../relay/metrics.ts';
import { createQueueSender, isRetryable, type BatchSendPort } from '../../../relay/send/queue-sender.ts';

const queueUrls = {
  reconcile: 'https://sqs/reconcile',
  drift: 'https://sqs/drift',
  health: 'https://sqs/health',
};
const key = (name: string) => ({ namespace: 'team-a', name, uid: `uid-${name}` });

type Responder = (
  input: SendMessageBatchRequest,
  call: number,
) => Promise<Partial<SendMessageBatchCommandOutput>>;

const allSucceed: Responder = (input) =>
  Promise.resolve({
    Successful: (input.Entries ?? []).map((e) => ({
      Id: e.Id!,
      MessageId: `msg-${e.Id}`,
      MD5OfMessageBody: '',
    })),
    Failed: [],
  });

function setup(responder: Responder = allSucceed, extra: { windowMs?: number; maxAttempts?: number } = {}) {
  const calls: SendMessageBatchRequest[] = [];
  const lines: Record<string, unknown>[] = [];
  const sqs: BatchSendPort = {
    send: async (command: SendMessageBatchCommand) => {
      calls.push(command.input);
      return {
        $metadata: {},
        ...(await responder(command.input, calls.length)),
      } as SendMessageBatchCommandOutput;
    },
  };
  const metrics = createRelayMetrics();
  const sender = createQueueSender({
    sqs,
    queueUrls,
    logger: createLogger({ write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
    metrics,
    windowMs: extra.windowMs ?? 20,
    maxAttempts: extra.maxAttempts ?? 3,
    retryBaseMs: 1,
  });
  const bodies = () =>
    calls.flatMap((c) => (c.Entries ?? []).map((e) => parseQueueMessage(e.MessageBody ?? '')));
  return { calls, lines, metrics, sender, bodies };
}

const throttled = () =>
  Object.assign(new Error('Rate exceeded'), {
    name: 'ThrottlingException',
    $metadata: { httpStatusCode: 400 },
  });

describe('queue sender', () => {
  it('many events for one Release within the window become one message with the first cause and the count', async () => {
    const { calls, sender, bodies } = setup();
    for (let i = 0; i < 50; i++)
      sender.enqueue('reconcile', key('podinfo'), i === 0 ? 'watch: labels changed' : 'later');
    await sleep(80);
    await sender.flush();
    expect(calls).toHaveLength(1);
    expect(calls[0]?.QueueUrl).toBe(queueUrls.reconcile);
    const [body] = bodies();
    expect(body).toMatchObject({
      ok: true,
      message: { v: 1, loop: 'reconcile', namespace: 'team-a', name: 'podinfo', uid: 'uid-podinfo' },
    });
    expect(body?.ok && body.message.cause).toBe('watch: labels changed (and 49 more events)');
  });

  it('sends at most 10 entries per SendMessageBatch, to the queue of each loop', async () => {
    const { calls, sender, metrics } = setup();
    for (let i = 0; i < 25; i++) sender.enqueue('health', key(`r${i}`), 'timer');
    sender.enqueue('drift', key('x'), 'timer');
    await sender.flush();
    expect(calls.map((c) => [c.QueueUrl, c.Entries?.length])).toEqual([
      [queueUrls.drift, 1],
      [queueUrls.health, 10],
      [queueUrls.health, 10],
      [queueUrls.health, 5],
    ]);
    expect(metrics.messagesSent.get({ loop: 'health' })).toBe(25);
    expect(metrics.sendLag.count({ loop: 'health' })).toBe(25);
  });

  it('retries a throttled call with backoff', async () => {
    const { calls, sender, metrics } = setup(async (input, call) => {
      if (call === 1) throw throttled();
      return allSucceed(input, call);
    });
    sender.enqueue('reconcile', key('a'), 'watch');
    await sender.flush();
    expect(calls).toHaveLength(2);
    expect(metrics.sendRetries.get({ loop: 'reconcile' })).toBe(1);
    expect(metrics.messagesSent.get({ loop: 'reconcile' })).toBe(1);
    expect(metrics.sendErrors.get({ loop: 'reconcile' })).toBe(0);
  });

  it('retries only the entries SQS failed on its side; entries refused as the sender fault are counted, not retried', async () => {
    const { calls, sender, metrics } = setup(async (input, call) => {
      if (call > 1) return allSucceed(input, call);
      const [a, b, c] = input.Entries ?? [];
      return {
        Successful: [{ Id: a.Id!, MessageId: '1', MD5OfMessageBody: '' }],
        Failed: [
          { Id: b.Id!, SenderFault: false, Code: 'InternalError' },
          { Id: c.Id!, SenderFault: true, Code: 'InvalidParameterValue' },
        ],
      };
    });
    for (const name of ['a', 'b', 'c']) sender.enqueue('reconcile', key(name), 'watch');
    await sender.flush();
    expect(calls.map((c) => c.Entries?.length)).toEqual([3, 1]);
    expect(metrics.messagesSent.get({ loop: 'reconcile' })).toBe(2);
    expect(metrics.sendErrors.get({ loop: 'reconcile' })).toBe(1);
  });

  it('gives up after maxAttempts, counting and logging each message', async () => {
    const { calls, sender, metrics, lines } = setup(async () => Promise.reject(throttled()), {
      maxAttempts: 3,
    });
    sender.enqueue('drift', key('a'), 'timer');
    sender.enqueue('drift', key('b'), 'timer');
    await sender.flush();
    expect(calls).toHaveLength(3);
    expect(metrics.sendErrors.get({ loop: 'drift' })).toBe(2);
    expect(lines.filter((l) => l['level'] === 'error')).toHaveLength(2);
  });

  it('does not retry an error that is not throttling, a server error or a network failure', async () => {
    const denied = Object.assign(new Error('denied'), {
      name: 'AccessDenied',
      $fault: 'client',
      $metadata: { httpStatusCode: 403 },
    });
    const { calls, sender, metrics } = setup(async () => Promise.reject(denied));
    sender.enqueue('reconcile', key('a'), 'watch');
    await sender.flush();
    expect(calls).toHaveLength(1);
    expect(metrics.sendErrors.get({ loop: 'reconcile' })).toBe(1);
    expect(isRetryable(Object.assign(new Error('x'), { $metadata: { httpStatusCode: 503 } }))).toBe(true);
    expect(isRetryable(new Error('socket hang up'))).toBe(true);
  });

  it('a message that fails the queue contract is counted and not sent', async () => {
    const { calls, sender, metrics } = setup();
    sender.enqueue('reconcile', { namespace: 'Not_A_Namespace', name: 'x', uid: 'u' }, 'watch');
    await sender.flush();
    expect(calls).toHaveLength(0);
    expect(metrics.sendErrors.get({ loop: 'reconcile' })).toBe(1);
  });

  it('stop sends what is pending; stop without flush drops it', async () => {
    const flushed = setup(undefined, { windowMs: 10_000 });
    flushed.sender.enqueue('reconcile', key('a'), 'watch');
    await flushed.sender.stop();
    expect(flushed.calls).toHaveLength(1);
    flushed.sender.enqueue('reconcile', key('b'), 'after stop');
    expect(flushed.sender.pending()).toBe(0);

    const dropped = setup(undefined, { windowMs: 10_000 });
    dropped.sender.enqueue('reconcile', key('a'), 'watch');
    await dropped.sender.stop({ flush: false });
    expect(dropped.calls).toHaveLength(0);
  });
});
