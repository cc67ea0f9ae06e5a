import {
  ChangeMessageVisibilityBatchCommand,
  SendMessageBatchCommand,
  type BatchResultErrorEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/**
 * The records of one batch run at once, and each sends its follow-up messages (reconcile →
 * drift and health) and changes its own visibility (a requeue): one SQS request each, ten
 * records making twenty. This gathers the calls made within `lingerMs` of each other into
 * SendMessageBatch / ChangeMessageVisibilityBatch requests of up to ten entries per queue,
 * while every caller still learns whether its own entry succeeded: a failed entry
 * rejects that caller only, a failed request rejects every caller in it.
 */

export class SqsEntryError extends Error {
  override name = 'SqsEntryError';
  readonly code: string | undefined;
  constructor(operation: string, entry: BatchResultErrorEntry) {
    super(`${operation}: ${entry.Code ?? 'error'}${entry.Message ? `: ${entry.Message}` : ''}`);
    this.code = entry.Code;
  }
}

interface Pending<E> {
  readonly entry: E;
  resolve(): void;
  reject(error: unknown): void;
}

/** SQS takes at most ten entries per batch request. */
const MAX_ENTRIES = 10;
/**
 * SQS refuses a SendMessageBatch whose bodies add up to more than its message size limit
 * (BatchRequestTooLong, the whole request fails); 256 KiB, the limit applied-hint.ts sizes for.
 */
export const MAX_BATCH_BYTES = 256 * 1024;

/**
 * Gathers entries per queue URL; `flush` sends up to ten of one queue's entries (together at
 * most MAX_BATCH_BYTES by `sizeOf`) in one request and answers for each entry by its Id. State
 * lives in the returned object only.
 */
function gatherer<E extends { Id: string | undefined }>(
  lingerMs: number,
  flush: (queueUrl: string, entries: E[]) => Promise<{ failed: readonly BatchResultErrorEntry[] }>,
  operation: string,
  sizeOf: (entry: E) => number = () => 0,
) {
  const waiting = new Map<string, { items: Pending<E>[]; bytes: number; timer: NodeJS.Timeout }>();
  let nextId = 0;

  const send = async (queueUrl: string, items: Pending<E>[]): Promise<void> => {
    try {
      const { failed } = await flush(
        queueUrl,
        items.map((i) => i.entry),
      );
      const byId = new Map(failed.map((f) => [f.Id, f]));
      for (const item of items) {
        const failure = byId.get(item.entry.Id);
        if (failure === undefined) item.resolve();
        else item.reject(new SqsEntryError(operation, failure));
      }
    } catch (error) {
      for (const item of items) item.reject(error);
    }
  };

  const take = (queueUrl: string): void => {
    const group = waiting.get(queueUrl);
    if (group === undefined) return;
    clearTimeout(group.timer);
    waiting.delete(queueUrl);
    void send(queueUrl, group.items);
  };

  return (queueUrl: string, make: (id: string) => E): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const entry = make(`e${nextId++}`);
      const bytes = sizeOf(entry);
      // An entry that would make the request too long starts the next one.
      if ((waiting.get(queueUrl)?.bytes ?? 0) + bytes > MAX_BATCH_BYTES) take(queueUrl);
      let group = waiting.get(queueUrl);
      if (group === undefined) {
        group = { items: [], bytes: 0, timer: setTimeout(() => take(queueUrl), lingerMs) };
        waiting.set(queueUrl, group);
      }
      group.items.push({ entry, resolve, reject });
      group.bytes += bytes;
      if (group.items.length >= MAX_ENTRIES) take(queueUrl);
    });
}

export interface BatchingSqs {
  sendMessage(queueUrl: string, body: string, delaySeconds?: number): Promise<void>;
  changeVisibility(queueUrl: string, receiptHandle: string, visibilitySeconds: number): Promise<void>;
}

/** Default wait for more calls: short against a run's tens of milliseconds, long enough for a batch's records to meet. */
export const DEFAULT_LINGER_MS = 5;

export function createBatchingSqs(sqs: SQSClient, lingerMs = DEFAULT_LINGER_MS): BatchingSqs {
  const send = gatherer<{ Id: string; MessageBody: string; DelaySeconds?: number }>(
    lingerMs,
    async (QueueUrl, Entries) => {
      const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries }));
      return { failed: out.Failed ?? [] };
    },
    'SendMessageBatch',
    (entry) => Buffer.byteLength(entry.MessageBody),
  );
  const visibility = gatherer<{ Id: string; ReceiptHandle: string; VisibilityTimeout: number }>(
    lingerMs,
    async (QueueUrl, Entries) => {
      const out = await sqs.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl, Entries }));
      return { failed: out.Failed ?? [] };
    },
    'ChangeMessageVisibilityBatch',
  );
  return {
    sendMessage: (queueUrl, body, delaySeconds) =>
      send(queueUrl, (Id) => ({
        Id,
        MessageBody: body,
        ...(delaySeconds !== undefined ? { DelaySeconds: delaySeconds } : {}),
      })),
    changeVisibility: (queueUrl, receiptHandle, visibilitySeconds) =>
      visibility(queueUrl, (Id) => ({
        Id,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: visibilitySeconds,
      })),
  };
}
