import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/**
 * A queue's messages waiting for a consumer (SQS ApproximateNumberOfMessages: visible ones, not
 * those in flight or delayed), read at most once per `maxAgeMs` per container: the records of a
 * batch, and the batches of the next seconds, share one GetQueueAttributes. Concurrent callers
 * share the call in flight. Resolves undefined when the call fails (reported through `onError`):
 * a backlog that cannot be read never holds work back (domain/runtime/burst-yield.ts).
 */
export type QueueBacklog = () => Promise<number | undefined>;

export interface QueueBacklogOptions {
  /** How long one reading is used; default 3 s. */
  readonly maxAgeMs?: number;
  readonly now?: () => number;
  readonly onError?: (error: unknown) => void;
}

export function createQueueBacklog(
  sqs: Pick<SQSClient, 'send'>,
  queueUrl: string,
  options: QueueBacklogOptions = {},
): QueueBacklog {
  const maxAgeMs = options.maxAgeMs ?? 3_000;
  const now = options.now ?? Date.now;
  let reading: { at: number; value: Promise<number | undefined> } | undefined;
  const read = async (): Promise<number | undefined> => {
    try {
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages'],
        }),
      );
      const count = Number(Attributes?.ApproximateNumberOfMessages);
      return Number.isFinite(count) && count >= 0 ? count : undefined;
    } catch (error) {
      options.onError?.(error);
      return undefined;
    }
  };
  return () => {
    const at = now();
    if (reading === undefined || at - reading.at >= maxAgeMs || at < reading.at)
      reading = { at, value: read() };
    return reading.value;
  };
}
