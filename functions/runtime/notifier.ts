import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Release } from '../../domain/api/objects.ts';
import { queueMessageBody, type Loop, type QueueMessage } from '../../domain/runtime/queue-message.ts';

/** Sends a Release to a loop's queue at once (reconcile → health/drift after an apply; drift → reconcile on Correct). */
export function createNotifier(sqs: SQSClient, queueUrls: Record<Loop, string>, now: () => Date = () => new Date()) {
  return async (loop: Loop, release: Release, cause: string, applied?: QueueMessage['applied']): Promise<void> => {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrls[loop],
        MessageBody: queueMessageBody({
          v: 1,
          loop,
          namespace: release.metadata.namespace ?? 'default',
          name: release.metadata.name,
          uid: release.metadata.uid ?? '',
          cause,
          sentAt: now().toISOString(),
          ...(applied !== undefined ? { applied } : {}),
        }),
      }),
    );
  };
}
