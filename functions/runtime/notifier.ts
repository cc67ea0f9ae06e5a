import type { Release } from '../../domain/api/objects.ts';
import { queueMessageBody, type Loop, type QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { BatchingSqs } from '../../adapters/sqs/batching.ts';

/** Sends a Release to another loop's queue at once. */
export type Notifier = (
  loop: Loop,
  release: Release,
  cause: string,
  applied?: QueueMessage['applied'],
) => Promise<void>;

/**
 * Sends a Release to a loop's queue at once (reconcile → health/drift after an apply; drift →
 * reconcile on Correct). The sends of a batch's records go out together (adapters/sqs/batching.ts).
 */
export function createNotifier(
  sqs: Pick<BatchingSqs, 'sendMessage'>,
  queueUrls: Record<Loop, string>,
  now: () => Date = () => new Date(),
): Notifier {
  return async (loop, release, cause, applied) => {
    await sqs.sendMessage(
      queueUrls[loop],
      queueMessageBody({
        v: 1,
        loop,
        namespace: release.metadata.namespace ?? 'default',
        name: release.metadata.name,
        uid: release.metadata.uid ?? '',
        cause,
        sentAt: now().toISOString(),
        ...(applied !== undefined ? { applied } : {}),
      }),
    );
  };
}
