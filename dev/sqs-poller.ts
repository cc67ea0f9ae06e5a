import { DeleteMessageBatchCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { Message, MessageAttributeValue, SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from '../platform/logger.ts';
import { parseQueueArn } from '../functions/runtime/sqs-event.ts';
import type {
  SQSBatchResponse,
  SQSEvent,
  SQSMessageAttribute,
  SQSRecord,
  SQSRecordAttributes,
} from '../functions/runtime/sqs-event.ts';

/**
 * `convoy dev`'s stand-in for a Lambda event source mapping: long-polls one
 * queue, hands each batch to the real handler as the SQSEvent Lambda would
 * build, and applies the partial-batch response the way Lambda does:
 *
 * - records not listed in batchItemFailures are deleted;
 * - listed records are left alone (the handler may have changed their
 *   visibility; otherwise they return after the queue's visibility timeout);
 * - a handler that throws, or a response naming an unknown or empty
 *   itemIdentifier, fails the whole batch: nothing is deleted.
 *
 * `concurrency` batches at a time per poller (default 1), like the concurrent
 * invocations of an event source mapping: with more than one, a batch that
 * waits (e.g. on a Git server that answers slowly) does not hold up the
 * other messages of its queue.
 */

export type BatchHandler = (event: SQSEvent) => Promise<SQSBatchResponse | null | undefined | void>;

export interface PollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** Goes into every record's eventSourceARN (and awsRegion), as on Lambda. */
  readonly queueArn: string;
  readonly handler: BatchHandler;
  readonly logger: Logger;
  /** Messages per batch, 1–10 (ReceiveMessage's limit). Default 10. */
  readonly batchSize?: number;
  /** Long-poll wait, 1–20 s. Default 20. */
  readonly waitTimeSeconds?: number;
  /** Overrides the queue's visibility timeout for received messages (0–43200 s). */
  readonly visibilityTimeout?: number;
  /** Batches in flight at once, 1–1000 (an event source mapping's maximum concurrency). Default 1. */
  readonly concurrency?: number;
}

export interface Poller {
  /**
   * Aborts the long poll in flight, lets a batch already handed to the
   * handler finish (and its deletes happen), then resolves.
   */
  stop(): Promise<void>;
}

export class PollerOptionsError extends Error {
  override name = 'PollerOptionsError';
}

const ERROR_PAUSE_MS = { initial: 500, max: 20_000 };

export function startPoller(options: PollerOptions): Poller {
  const { sqs, queueUrl, queueArn, handler } = options;
  const batchSize = options.batchSize ?? 10;
  const waitTimeSeconds = options.waitTimeSeconds ?? 20;
  checkInteger('batchSize', batchSize, 1, 10);
  checkInteger('waitTimeSeconds', waitTimeSeconds, 1, 20);
  const concurrency = options.concurrency ?? 1;
  checkInteger('concurrency', concurrency, 1, 1000);
  if (options.visibilityTimeout !== undefined)
    checkInteger('visibilityTimeout', options.visibilityTimeout, 0, 43_200);
  const awsRegion = parseQueueArn(queueArn).region;
  const logger = options.logger.child({ component: 'sqs-poller', queueArn });

  const abort = new AbortController();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        abort.signal.removeEventListener('abort', done);
        resolve();
      }
      abort.signal.addEventListener('abort', done, { once: true });
    });

  const pollOnce = async (): Promise<void> => {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: batchSize,
        WaitTimeSeconds: waitTimeSeconds,
        VisibilityTimeout: options.visibilityTimeout,
        // Both spellings: the legacy one is what some emulators understand.
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: abort.signal },
    );
    if (Messages.length === 0) return;
    const event = toSqsEvent(Messages, { queueArn, awsRegion });
    let response: Awaited<ReturnType<BatchHandler>>;
    try {
      response = await handler(event);
    } catch (error) {
      logger.error('handler threw; the whole batch returns after its visibility timeout', {
        error,
        records: event.Records.length,
      });
      return;
    }
    const verdict = recordsToDelete(event, response);
    if (!verdict.ok) {
      logger.error('invalid batch response; the whole batch returns after its visibility timeout', {
        reason: verdict.reason,
      });
      return;
    }
    await deleteRecords(verdict.records);
  };

  const deleteRecords = async (records: readonly SQSRecord[]): Promise<void> => {
    for (let start = 0; start < records.length; start += 10) {
      const chunk = records.slice(start, start + 10);
      // Not tied to the abort signal: a finished batch is always settled.
      const { Failed = [] } = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((record, index) => ({
            Id: `r${start + index}`,
            ReceiptHandle: record.receiptHandle,
          })),
        }),
      );
      for (const failure of Failed) {
        logger.error('could not delete a handled record; it will be delivered again', {
          entry: failure.Id,
          code: failure.Code,
          reason: failure.Message,
        });
      }
    }
  };

  const run = async (): Promise<void> => {
    let pauseMs = ERROR_PAUSE_MS.initial;
    while (!abort.signal.aborted) {
      try {
        await pollOnce();
        pauseMs = ERROR_PAUSE_MS.initial;
      } catch (error) {
        if (abort.signal.aborted) break;
        logger.error('polling failed; trying again', { error, retryInMs: pauseMs });
        await sleep(pauseMs);
        pauseMs = Math.min(pauseMs * 2, ERROR_PAUSE_MS.max);
      }
    }
  };

  // Each loop receives and handles its own batches: `concurrency` batches in flight at most.
  const running = Promise.all(Array.from({ length: concurrency }, () => run()));
  logger.info('polling', { queueUrl, batchSize, waitTimeSeconds, concurrency });
  return {
    async stop() {
      abort.abort();
      await running;
      logger.info('stopped');
    },
  };
}

/** The SQSEvent Lambda builds from received messages. */
export function toSqsEvent(
  messages: readonly Message[],
  source: { readonly queueArn: string; readonly awsRegion?: string },
): SQSEvent {
  const awsRegion = source.awsRegion ?? parseQueueArn(source.queueArn).region;
  return {
    Records: messages.map((message): SQSRecord => {
      const record: SQSRecord = {
        messageId: message.MessageId ?? '',
        receiptHandle: message.ReceiptHandle ?? '',
        body: message.Body ?? '',
        attributes: recordAttributes(message.Attributes ?? {}),
        messageAttributes: Object.fromEntries(
          Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
            name,
            messageAttribute(value),
          ]),
        ),
        md5OfBody: message.MD5OfBody ?? '',
        eventSource: 'aws:sqs',
        eventSourceARN: source.queueArn,
        awsRegion,
      };
      if (message.MD5OfMessageAttributes) record.md5OfMessageAttributes = message.MD5OfMessageAttributes;
      return record;
    }),
  };
}

export type DeleteVerdict =
  | { readonly ok: true; readonly records: readonly SQSRecord[] }
  | { readonly ok: false; readonly reason: string };

/**
 * Which records Lambda would delete after the handler returned `response`.
 * An empty or missing response means every record succeeded; an
 * itemIdentifier that is empty or not a messageId of the batch fails all.
 */
export function recordsToDelete(event: SQSEvent, response: unknown): DeleteVerdict {
  if (response === null || response === undefined) return { ok: true, records: event.Records };
  if (typeof response !== 'object')
    return { ok: false, reason: `the response is a ${typeof response}, not an object` };
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return { ok: true, records: event.Records };
  if (!Array.isArray(failures)) return { ok: false, reason: 'batchItemFailures is not an array' };
  const ids = new Set(event.Records.map((record) => record.messageId));
  const failed = new Set<string>();
  for (const failure of failures as unknown[]) {
    const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof id !== 'string' || id === '') {
      return { ok: false, reason: 'a batchItemFailures entry has no itemIdentifier' };
    }
    if (!ids.has(id))
      return { ok: false, reason: `itemIdentifier ${JSON.stringify(id)} is not a messageId of this batch` };
    failed.add(id);
  }
  return { ok: true, records: event.Records.filter((record) => !failed.has(record.messageId)) };
}

function recordAttributes(attributes: Partial<Record<string, string>>): SQSRecordAttributes {
  const result: SQSRecordAttributes = {
    ApproximateReceiveCount: attributes['ApproximateReceiveCount'] ?? '',
    SentTimestamp: attributes['SentTimestamp'] ?? '',
    SenderId: attributes['SenderId'] ?? '',
    ApproximateFirstReceiveTimestamp: attributes['ApproximateFirstReceiveTimestamp'] ?? '',
  };
  for (const name of [
    'AWSTraceHeader',
    'SequenceNumber',
    'MessageGroupId',
    'MessageDeduplicationId',
    'DeadLetterQueueSourceArn',
  ] as const) {
    const value = attributes[name];
    if (value !== undefined) result[name] = value;
  }
  return result;
}

function messageAttribute(value: MessageAttributeValue): SQSMessageAttribute {
  const attribute: SQSMessageAttribute = {
    stringListValues: value.StringListValues ?? [],
    binaryListValues: (value.BinaryListValues ?? []).map(base64),
    dataType: value.DataType ?? 'String',
  };
  if (value.StringValue !== undefined) attribute.stringValue = value.StringValue;
  if (value.BinaryValue !== undefined) attribute.binaryValue = base64(value.BinaryValue);
  return attribute;
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

function checkInteger(field: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new PollerOptionsError(
      `startPoller: ${field} must be an integer from ${min} to ${max}, got ${value}`,
    );
  }
}
