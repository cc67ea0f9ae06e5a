import { INVALID_MESSAGE_ACTION, toSqsAction } from '../../adapters/sqs/outcome-actions.ts';
import type { SqsAction } from '../../adapters/sqs/outcome-actions.ts';
import type { RetryBackoffPolicy } from '../../domain/runtime/backoff.ts';
import { retry } from '../../domain/runtime/outcome.ts';
import type { Outcome } from '../../domain/runtime/outcome.ts';
import { parseQueueMessage, resentMessageBody } from '../../domain/runtime/queue-message.ts';
import type { MessageLoop, QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { LogFields, Logger } from '../../platform/logger.ts';
import { queueUrlFromArn } from './sqs-event.ts';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from './sqs-event.ts';

/**
 * The SQS batch handler shared by the reconcile, drift, health and fleet functions:
 * parse each record, run the loop's record handler, map its Outcome to SQS
 * (adapters/sqs/outcome-actions.ts) and answer with batchItemFailures.
 * Lambda, the dev poller and tests all call the function this returns.
 */

/** The one SQS call the runtime makes; adapters/sqs/queues.ts has the SDK-backed one. */
export interface VisibilityPort {
  changeVisibility(queueUrl: string, receiptHandle: string, visibilitySeconds: number): Promise<void>;
  /** Sends `body` again as a new message delayed by `delaySeconds` (0–900). */
  resend?(queueUrl: string, body: string, delaySeconds: number): Promise<void>;
  /** Copies a message that can never succeed to the dead-letter queue of `queueUrl` (adapters/sqs/dead-letter.ts). */
  deadLetter?(queueUrl: string, copy: { body: string; messageId: string; reason: string }): Promise<void>;
}

export interface RecordContext {
  /** Carries loop, messageId, namespace, name, uid, cause and receiveCount on every line. */
  readonly logger: Logger;
  /** ApproximateReceiveCount: 1 on the first delivery. */
  readonly receiveCount: number;
  readonly messageId: string;
  readonly record: SQSRecord;
  /** Adds fields to the run's outcome line (e.g. when the run held its Lease); undefined: none kept. */
  readonly annotate?: ((fields: LogFields) => void) | undefined;
}

/** A loop's work for one message. Throwing is the same as returning retry(error). */
export type RecordHandler = (message: QueueMessage, context: RecordContext) => Promise<Outcome>;

export interface SqsBatchHandlerOptions {
  /** The loop this function runs; a message for another loop is invalid here. */
  readonly loop: MessageLoop;
  readonly handleRecord: RecordHandler;
  readonly sqs: VisibilityPort;
  readonly logger: Logger;
  /** Backoff for a `retry` that carries no policy of its own; default: the work-queue default. */
  readonly retryPolicyOf?: (message: QueueMessage) => RetryBackoffPolicy | undefined;
  /**
   * The queue URL for ChangeMessageVisibility. Default: derived from the record's
   * eventSourceARN, as on AWS. The dev poller's caller may pass the emulator's URL.
   */
  readonly queueUrlOf?: (record: SQSRecord) => string;
}

/**
 * One SQS batch. Each record logs through its own child of `logger`, made when the record starts
 * (so on Lambda it carries the invocation's context; see lambda-entry.ts).
 */
export type SqsBatchHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

type RecordResult = 'succeeded' | 'failed';

export function createSqsBatchHandler(options: SqsBatchHandlerOptions): SqsBatchHandler {
  const { loop, handleRecord, sqs, logger, retryPolicyOf } = options;
  const queueUrlOf = options.queueUrlOf ?? ((record: SQSRecord) => queueUrlFromArn(record.eventSourceARN));

  const processRecord = async (record: SQSRecord): Promise<RecordResult> => {
    const receiveCount = parseReceiveCount(record.attributes?.ApproximateReceiveCount);
    let log = logger.child({ loop, messageId: record.messageId, receiveCount });

    // An invalid message can never succeed (adapters/sqs/outcome-actions.ts INVALID_MESSAGE_ACTION):
    // copied to the dead-letter queue and acknowledged at its first receive, with one log line. When
    // the copy fails it fails alone and comes back after 1 s, so the redrive policy moves it after
    // maxReceiveCount quick receives rather than maxReceiveCount visibility timeouts.
    const deadLetter = async (reason: string): Promise<RecordResult> => {
      const fields = { reason, bodyLength: record.body.length };
      if (INVALID_MESSAGE_ACTION.deadLetter && sqs.deadLetter !== undefined) {
        try {
          await sqs.deadLetter(queueUrlOf(record), {
            body: record.body,
            messageId: record.messageId,
            reason,
          });
          log.warn('invalid message moved to the dead-letter queue', fields);
          return 'succeeded';
        } catch (thrown) {
          log.warn('invalid message left for the dead-letter queue: copying it there failed', {
            ...fields,
            error: toError(thrown),
          });
        }
      } else {
        log.warn('invalid message left for the dead-letter queue', fields);
      }
      await sqs
        .changeVisibility(
          queueUrlOf(record),
          record.receiptHandle,
          INVALID_MESSAGE_ACTION.otherwiseRedeliverAfterSeconds,
        )
        .catch((thrown: unknown) => {
          log.warn("could not shorten an invalid record's visibility", { error: toError(thrown) });
        });
      return 'failed';
    };
    const parsed = parseQueueMessage(record.body);
    if (!parsed.ok) return deadLetter(parsed.error);
    const message = parsed.message;
    log = log.child({
      namespace: message.namespace,
      name: message.name,
      uid: message.uid,
      cause: message.cause,
    });
    if (message.loop !== loop) {
      return deadLetter(
        `message is for the ${message.loop} loop but arrived at the ${loop} function; check the relay's queue URLs`,
      );
    }

    const started = Date.now();
    const annotations: Record<string, unknown> = {};
    let outcome: Outcome;
    let threw = false;
    try {
      outcome = await handleRecord(message, {
        logger: log,
        receiveCount,
        messageId: record.messageId,
        record,
        annotate: (fields) => Object.assign(annotations, fields),
      });
    } catch (thrown) {
      threw = true;
      outcome = retry(toError(thrown));
    }

    // Asked only when it matters: a retry that carries no policy of its own.
    const retryPolicy =
      outcome.kind === 'retry' && outcome.policy === undefined ? retryPolicyOf?.(message) : undefined;
    const action = toSqsAction(outcome, { receiveCount, retryPolicy, jitterKey: record.messageId });
    logOutcome(log.child(annotations), outcome, action, { durationMs: Date.now() - started, threw });
    if (action.ack && action.resendAfterSeconds !== undefined) {
      try {
        if (sqs.resend === undefined) throw new Error('this runtime cannot send messages');
        // The copy names the message whose wait it continues (its chain), so the Lease still knows it as the follow-up.
        await sqs.resend(
          queueUrlOf(record),
          resentMessageBody(message, record.messageId),
          action.resendAfterSeconds,
        );
        return 'succeeded';
      } catch (thrown) {
        // The record stays: it comes back after the same delay as a redelivery instead.
        log.warn('could not send the record again as a new message; it is redelivered instead', {
          error: toError(thrown),
        });
        await sqs
          .changeVisibility(queueUrlOf(record), record.receiptHandle, action.resendAfterSeconds)
          .catch((error: unknown) => {
            log.error("could not change the record's visibility", { error: toError(error) });
          });
        return 'failed';
      }
    }
    if (action.ack) return 'succeeded';

    try {
      await sqs.changeVisibility(queueUrlOf(record), record.receiptHandle, action.visibilitySeconds);
    } catch (thrown) {
      // Still reported as failed: the record comes back after the queue's visibility timeout instead.
      log.error("could not change the record's visibility; it returns after the queue's visibility timeout", {
        error: toError(thrown),
        visibilitySeconds: action.visibilitySeconds,
      });
    }
    return 'failed';
  };

  return async (event) => {
    const records = event.Records ?? [];
    const results = await Promise.allSettled(records.map((record) => processRecord(record)));
    const batchItemFailures = [];
    for (const [index, result] of results.entries()) {
      const record = records[index];
      if (record === undefined) continue;
      if (result.status === 'fulfilled' && result.value === 'succeeded') continue;
      if (result.status === 'rejected') {
        // A bug in the runtime itself (e.g. retryPolicyOf threw); it fails this record only.
        logger.error('record failed in the batch runtime', {
          loop,
          messageId: record.messageId,
          error: toError(result.reason),
        });
      }
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
    return { batchItemFailures };
  };
}

function logOutcome(
  log: Logger,
  outcome: Outcome,
  action: SqsAction,
  { durationMs, threw }: { durationMs: number; threw: boolean },
): void {
  const visibilitySeconds = action.ack ? action.resendAfterSeconds : action.visibilitySeconds;
  switch (outcome.kind) {
    case 'done':
      log.info('done', { outcome: outcome.kind, durationMs });
      return;
    case 'stop':
      log.info('stopped until the next interval or change', { outcome: outcome.kind, durationMs });
      return;
    case 'dropped':
      log.info('dropped', { outcome: outcome.kind, reason: outcome.reason, durationMs });
      return;
    case 'requeueAfter':
      log.info('requeued', {
        outcome: outcome.kind,
        ...(outcome.asNewMessage === true ? { asNewMessage: true } : {}),
        reason: outcome.reason,
        delayMs: outcome.delayMs,
        visibilitySeconds,
        durationMs,
      });
      return;
    case 'retry': {
      const fields = { outcome: outcome.kind, error: outcome.error, visibilitySeconds, durationMs };
      // A returned retry is an expected transient failure; a throw is a bug or an unforeseen error (stack logged).
      if (threw) log.error('record handler threw; retrying with backoff', fields);
      else log.warn('failed; retrying with backoff', fields);
      return;
    }
  }
}

function parseReceiveCount(value: string | undefined): number {
  const count = value === undefined ? Number.NaN : Number(value);
  // A missing or odd attribute counts as the first attempt: the shortest backoff, never a crash.
  return Number.isInteger(count) && count >= 1 ? count : 1;
}

function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  // Only the start of the value: a thrown object could be a whole API response.
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return new Error(`a non-Error value was thrown (${typeof value}): ${text.slice(0, 200)}`);
}
