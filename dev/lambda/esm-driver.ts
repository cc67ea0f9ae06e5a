// An SQS event source mapping driving a function under the emulator, as AWS documents it:
// pollers long-poll the queue and gather a batch up to BatchSize (waiting at most
// MaximumBatchingWindowInSeconds for more), at most MaximumConcurrency invocations run at once
// (one emulator per slot: an emulator takes one invoke at a time), and each invocation's answer
// is settled by batch-semantics.ts — deletes for a success, nothing for a function error or a
// timeout, batchItemFailures honoured. Receives count toward the queue's maxReceiveCount and move
// a message to the DLQ exactly as the queue server does it (fauxqs implements SQS's redrive).
// Test and dev infrastructure, not product code.
import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Logger } from '../../platform/logger.ts';
import type { SQSEvent } from '../../functions/runtime/sqs-event.ts';
import type { QueueLoop } from '../../domain/runtime/queue-message.ts';
import { toSqsEvent } from '../sqs-poller.ts';
import {
  settleInvocation,
  splitByPayload,
  INVOKE_PAYLOAD_LIMIT_BYTES,
  type Settlement,
} from './batch-semantics.ts';
import type { Emulator, InvokeResult } from './emulator.ts';
import type { EventSourceSettings } from './template.ts';

export interface InvocationRecord {
  readonly loop: QueueLoop;
  readonly slot: number;
  readonly records: number;
  /** The messageIds of the invocation's event, in order. */
  readonly messageIds: readonly string[];
  /** Size of the event sent to the function, in bytes. */
  readonly payloadBytes: number;
  /** Each record's ApproximateReceiveCount, in order (1 on its first delivery). */
  readonly receiveCounts: readonly number[];
  /** When the batch was received (Date.now(), after ReceiveMessage answered). */
  readonly receivedAt: number;
  readonly result: InvokeResult;
  readonly settlement: Settlement;
}

export interface DriverOptions {
  readonly loop: QueueLoop;
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly settings: EventSourceSettings;
  /** Concurrent invocation slots: the template's MaximumConcurrency, possibly capped by the caller. */
  readonly slots: number;
  /** Starts the emulator of a slot, on its first batch. */
  readonly startEmulator: (slot: number) => Promise<Emulator>;
  readonly logger: Logger;
  /** Long-poll wait per ReceiveMessage (AWS's pollers use 20 s); default 20. */
  readonly waitTimeSeconds?: number;
  readonly payloadLimitBytes?: number;
  readonly onInvocation?: (record: InvocationRecord) => void;
}

export interface EventSourceDriver {
  readonly invocations: readonly InvocationRecord[];
  /** Invocations running now (never more than the slots). */
  inFlight(): number;
  /** Stops polling, lets the invocations in flight finish and settle, stops the emulators. */
  stop(): Promise<void>;
}

export function startEventSourceDriver(options: DriverOptions): EventSourceDriver {
  const { loop, sqs, queueUrl, queueArn, settings, logger } = options;
  const abort = new AbortController();
  const invocations: InvocationRecord[] = [];
  const emulators: (Emulator | undefined)[] = [];
  let running = 0;
  const log = logger.child({ component: 'event-source-mapping', loop });

  const receive = async (max: number, waitSeconds: number): Promise<Message[]> => {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: waitSeconds,
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: abort.signal },
    );
    return Messages;
  };

  /** A batch: up to BatchSize messages, gathered for at most the batching window after the first. */
  const gather = async (): Promise<Message[]> => {
    const batch = await receive(settings.batchSize, options.waitTimeSeconds ?? 20);
    if (batch.length === 0) return batch;
    const deadline = Date.now() + settings.maximumBatchingWindowInSeconds * 1000;
    while (batch.length < settings.batchSize && Date.now() < deadline && !abort.signal.aborted) {
      const wait = Math.min(20, Math.max(0, Math.floor((deadline - Date.now()) / 1000)));
      batch.push(...(await receive(settings.batchSize - batch.length, wait)));
      if (wait === 0) break;
    }
    return batch;
  };

  const invoke = async (slot: number, event: SQSEvent, receivedAt: number): Promise<void> => {
    const emulator = (emulators[slot] ??= await options.startEmulator(slot));
    running++;
    let result: InvokeResult;
    const payload = JSON.stringify(event);
    try {
      result = await emulator.invoke(payload);
    } finally {
      running--;
    }
    const settlement = settleInvocation(event, result, settings.reportBatchItemFailures);
    if (settlement.kind === 'succeeded') {
      for (let i = 0; i < settlement.deleted.length; i += 10) {
        const chunk = settlement.deleted.slice(i, i + 10);
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: chunk.map((r, n) => ({ Id: String(n), ReceiptHandle: r.receiptHandle })),
          }),
        );
      }
    } else {
      log.warn('the invocation failed: the whole batch returns after its visibility timeout', {
        reason: settlement.reason,
        records: event.Records.length,
        timedOut: result.timedOut,
      });
    }
    const record = {
      loop,
      slot,
      records: event.Records.length,
      messageIds: event.Records.map((r) => r.messageId),
      payloadBytes: Buffer.byteLength(payload),
      receiveCounts: event.Records.map((r) => Number(r.attributes.ApproximateReceiveCount)),
      receivedAt,
      result,
      settlement,
    };
    invocations.push(record);
    options.onInvocation?.(record);
  };

  const worker = async (slot: number): Promise<void> => {
    let pauseMs = 250;
    while (!abort.signal.aborted) {
      try {
        const messages = await gather();
        if (messages.length === 0) continue;
        const receivedAt = Date.now();
        const { parts, undeliverable } = splitByPayload(
          toSqsEvent(messages, { queueArn }),
          options.payloadLimitBytes ?? INVOKE_PAYLOAD_LIMIT_BYTES,
        );
        for (const record of undeliverable) {
          log.error(
            'a message is larger than the invocation payload limit: it is never delivered and goes to the DLQ by its receives',
            {
              messageId: record.messageId,
              bytes: record.body.length,
              limit: options.payloadLimitBytes ?? INVOKE_PAYLOAD_LIMIT_BYTES,
            },
          );
        }
        for (const part of parts) await invoke(slot, part, receivedAt);
        pauseMs = 250;
      } catch (error) {
        if (abort.signal.aborted) break;
        log.error('polling or invoking failed; retrying', {
          error: error instanceof Error ? error : new Error(String(error)),
        });
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        pauseMs = Math.min(pauseMs * 2, 5000);
      }
    }
  };

  const workers = Array.from({ length: options.slots }, (_, slot) => worker(slot));
  return {
    invocations,
    inFlight: () => running,
    async stop() {
      abort.abort();
      await Promise.allSettled(workers);
      await Promise.allSettled(emulators.map((e) => (e === undefined ? Promise.resolve() : e.stop())));
    },
  };
}
