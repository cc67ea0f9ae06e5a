import type { BatchingSqs } from './batching.ts';
import { connectSqs, type SqsClientSource } from './client-source.ts';

/**
 * The batch handler's VisibilityPort, backed by ChangeMessageVisibility; with `batching`, the
 * visibility changes of a batch's records go out together (batching.ts).
 */
export function sqsVisibilityPort(source: SqsClientSource, batching?: BatchingSqs): {
  changeVisibility(queueUrl: string, receiptHandle: string, visibilitySeconds: number): Promise<void>;
  resend(queueUrl: string, body: string, delaySeconds: number): Promise<void>;
} {
  return {
    async resend(queueUrl, body, delaySeconds) {
      if (batching !== undefined) return batching.sendMessage(queueUrl, body, delaySeconds);
      const { sqs, sdk } = await connectSqs(source);
      await sqs.send(new sdk.SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body, DelaySeconds: delaySeconds }));
    },
    async changeVisibility(queueUrl, receiptHandle, visibilitySeconds) {
      if (batching !== undefined) return batching.changeVisibility(queueUrl, receiptHandle, visibilitySeconds);
      const { sqs, sdk } = await connectSqs(source);
      await sqs.send(
        new sdk.ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: visibilitySeconds,
        }),
      );
    },
  };
}
