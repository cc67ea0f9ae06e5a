// What an SQS event source mapping does with one invocation's answer, as AWS documents it
// (Lambda developer guide, "Using Lambda with Amazon SQS" and "Handling errors for an SQS event
// source"): pure functions, unit-tested (test/unit/dev/lambda-batch.test.ts).
//
// - the function answered without error: the records are deleted, except with
//   ReportBatchItemFailures those its batchItemFailures name (left as they are: visible again when
//   the visibility the function set, or the queue's, runs out);
// - a function error (thrown, failed at init) or a timeout: the whole batch fails, nothing is deleted;
// - with ReportBatchItemFailures, an answer Lambda cannot read (not JSON, batchItemFailures not a
//   list, an entry without itemIdentifier or naming a record not in the batch) fails the whole batch.
import { recordsToDelete } from '../sqs-poller.ts';
import type { SQSEvent, SQSRecord } from '../../functions/runtime/sqs-event.ts';

/** Lambda's limit for a synchronous invocation's payload (the event the mapping sends), 6 MB. */
export const INVOKE_PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024;

export type Settlement =
  | { readonly kind: 'succeeded'; readonly deleted: readonly SQSRecord[]; readonly failedItems: number }
  | { readonly kind: 'batchFailed'; readonly reason: string };

export interface InvocationAnswer {
  readonly body: string;
  readonly error?: { readonly type: string; readonly message: string } | undefined;
}

export function settleInvocation(
  event: SQSEvent,
  answer: InvocationAnswer,
  reportBatchItemFailures: boolean,
): Settlement {
  if (answer.error !== undefined)
    return { kind: 'batchFailed', reason: `${answer.error.type}: ${answer.error.message}` };
  if (!reportBatchItemFailures) return { kind: 'succeeded', deleted: event.Records, failedItems: 0 };
  let response: unknown;
  const text = answer.body.trim();
  if (text === '') {
    response = null;
  } else {
    try {
      response = JSON.parse(text);
    } catch {
      return { kind: 'batchFailed', reason: `the answer is not JSON (${text.slice(0, 80)})` };
    }
  }
  const verdict = recordsToDelete(event, response);
  if (!verdict.ok) return { kind: 'batchFailed', reason: `invalid batch response: ${verdict.reason}` };
  return {
    kind: 'succeeded',
    deleted: verdict.records,
    failedItems: event.Records.length - verdict.records.length,
  };
}

/**
 * Splits received records into invocations whose event stays under the payload limit (the
 * mapping never sends a larger one). A record that alone exceeds it cannot be delivered: it is
 * returned in `undeliverable` and left on the queue, so it fails by its receives into the DLQ
 * (SQS's own message size limit, 1 MiB, keeps this from happening on AWS).
 */
export function splitByPayload(
  event: SQSEvent,
  limitBytes = INVOKE_PAYLOAD_LIMIT_BYTES,
): { parts: SQSEvent[]; undeliverable: SQSRecord[] } {
  const parts: SQSEvent[] = [];
  const undeliverable: SQSRecord[] = [];
  const overhead = Buffer.byteLength(JSON.stringify({ Records: [] }));
  let current: SQSRecord[] = [];
  let size = overhead;
  for (const record of event.Records) {
    const bytes = Buffer.byteLength(JSON.stringify(record)) + 1;
    if (overhead + bytes > limitBytes) {
      undeliverable.push(record);
      continue;
    }
    if (size + bytes > limitBytes && current.length > 0) {
      parts.push({ Records: current });
      current = [];
      size = overhead;
    }
    current.push(record);
    size += bytes;
  }
  if (current.length > 0) parts.push({ Records: current });
  return { parts, undeliverable };
}
