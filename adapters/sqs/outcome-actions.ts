import { delayMsToSeconds, MAX_DELAY_SECONDS, retryDelaySeconds } from '../../domain/runtime/backoff.ts';
import type { RetryBackoffPolicy } from '../../domain/runtime/backoff.ts';
import type { Outcome } from '../../domain/runtime/outcome.ts';

/**
 * The one place that turns a loop's Outcome into what happens to the SQS
 * record (docs: ARCHITECTURE.md, "The queue contract").
 *
 * - ack: the record succeeds and is deleted (Lambda deletes it; the dev poller does the same).
 * - not ack: the runtime calls ChangeMessageVisibility(visibilitySeconds) and reports
 *   the record in batchItemFailures, so SQS redelivers it after that delay.
 */
export type SqsAction =
  | { readonly ack: true; readonly resendAfterSeconds?: undefined }
  /** Send the body again as a new message delayed by this much, then acknowledge the record. */
  | { readonly ack: true; readonly resendAfterSeconds: number }
  | { readonly ack: false; readonly visibilitySeconds: number };

export interface SqsActionContext {
  /** The record's ApproximateReceiveCount: 1 on the first delivery. */
  readonly receiveCount: number;
  /** Backoff used for `retry` when the Outcome carries none; the work-queue default otherwise. */
  readonly retryPolicy?: RetryBackoffPolicy | undefined;
  /** The SQS message id: where in a jittered backoff's range this message's delay falls (domain/runtime/backoff.ts). */
  readonly jitterKey?: string | undefined;
}

// SQS accepts 0 ("visible now"), but a record redelivered at once would spin
// through Lambda invocations; one second is SQS's smallest real delay.
const MIN_REDELIVERY_SECONDS = 1;
/** SQS's longest DelaySeconds for a new message. */
const MAX_MESSAGE_DELAY_SECONDS = 900;

/**
 * A record that is not a valid message for its function — a body that does not parse, or a
 * message for another loop — can never succeed, whatever the retries: it is copied to the queue's
 * dead-letter queue and acknowledged at its first receive (dead-letter.ts). Only when the copy
 * cannot be sent is it left to the queue's redrive policy, redelivered after this many seconds
 * until maxReceiveCount moves it there. Valid work is never sent there by convoy: its retries
 * follow toSqsAction.
 */
export const INVALID_MESSAGE_ACTION = {
  deadLetter: true,
  otherwiseRedeliverAfterSeconds: MIN_REDELIVERY_SECONDS,
} as const;

export function toSqsAction(outcome: Outcome, context: SqsActionContext): SqsAction {
  switch (outcome.kind) {
    case 'done':
    case 'stop':
    case 'dropped':
      return { ack: true };
    case 'requeueAfter':
      if (outcome.asNewMessage === true) {
        return {
          ack: true,
          resendAfterSeconds: Math.min(
            Math.max(delayMsToSeconds(outcome.delayMs), MIN_REDELIVERY_SECONDS),
            MAX_MESSAGE_DELAY_SECONDS,
          ),
        };
      }
      return redeliverAfter(delayMsToSeconds(outcome.delayMs));
    case 'retry':
      return redeliverAfter(
        retryDelaySeconds(
          Math.max(context.receiveCount, outcome.attempt ?? 0),
          outcome.policy ?? context.retryPolicy,
          context.jitterKey,
        ),
      );
    default: {
      const unknown: never = outcome;
      throw new TypeError(`toSqsAction: unknown outcome ${JSON.stringify(unknown)}`);
    }
  }
}

function redeliverAfter(seconds: number): SqsAction {
  return {
    ack: false,
    visibilitySeconds: Math.min(Math.max(seconds, MIN_REDELIVERY_SECONDS), MAX_DELAY_SECONDS),
  };
}
