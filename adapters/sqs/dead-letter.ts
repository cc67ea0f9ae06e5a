import { GetQueueAttributesCommand, GetQueueUrlCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';

/**
 * Copies a message that can never succeed to its queue's dead-letter queue, so the record can be
 * deleted at its first receive instead of coming back until maxReceiveCount (190 receives and
 * 190 log lines with the default timings). The dead-letter queue is the one the queue's own
 * RedrivePolicy names — where SQS itself would move the message — looked up once per queue by
 * this port (GetQueueAttributes, then GetQueueUrl of the target ARN): no setting to keep in step,
 * the same on Lambda, under `convoy dev` and on fauxqs.
 *
 * The copy has the original body and three message attributes naming where it came from; SQS
 * gives it a new message id (convoy-source-message-id keeps the original's).
 */

export interface DeadLetterCopy {
  readonly body: string;
  /** The original message's id. */
  readonly messageId: string;
  /** Why it can never succeed, e.g. the parse error naming the bad field. */
  readonly reason: string;
}

export const DeadLetterAttribute = {
  reason: 'convoy-dead-letter-reason',
  sourceQueue: 'convoy-source-queue',
  sourceMessageId: 'convoy-source-message-id',
} as const;

/** The longest reason kept in the copy's attribute (the log line has it in full). */
const MAX_REASON_CHARS = 512;

export class DeadLetterQueueError extends Error {
  override name = 'DeadLetterQueueError';
}

export interface DeadLetterPort {
  /** Sends `copy` to the dead-letter queue of `queueUrl`. @throws DeadLetterQueueError, or the SDK's error */
  deadLetter(queueUrl: string, copy: DeadLetterCopy): Promise<void>;
}

export function sqsDeadLetters(sqs: SQSClient): DeadLetterPort {
  // Per port (one per container): a queue's redrive target does not change under a running function.
  const targets = new Map<string, Promise<string>>();
  const targetOf = (queueUrl: string): Promise<string> => {
    let target = targets.get(queueUrl);
    if (target === undefined) {
      target = deadLetterUrlOf(sqs, queueUrl);
      // A failed lookup is not kept: the next invalid message asks again.
      target.catch(() => targets.delete(queueUrl));
      targets.set(queueUrl, target);
    }
    return target;
  };
  return {
    async deadLetter(queueUrl, copy) {
      const target = await targetOf(queueUrl);
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: target,
          MessageBody: copy.body,
          MessageAttributes: {
            [DeadLetterAttribute.reason]: {
              DataType: 'String',
              StringValue: copy.reason.slice(0, MAX_REASON_CHARS) || 'invalid',
            },
            [DeadLetterAttribute.sourceQueue]: { DataType: 'String', StringValue: queueUrl },
            [DeadLetterAttribute.sourceMessageId]: {
              DataType: 'String',
              StringValue: copy.messageId || 'unknown',
            },
          },
        }),
      );
    },
  };
}

/** The URL of the queue `queueUrl`'s RedrivePolicy sends to. */
async function deadLetterUrlOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }),
  );
  const policy = Attributes?.RedrivePolicy;
  if (policy === undefined || policy === '') {
    throw new DeadLetterQueueError(
      `queue ${queueUrl} has no RedrivePolicy, so it has no dead-letter queue; give it one (the Convoy construct and convoy dev do)`,
    );
  }
  let arn: unknown;
  try {
    arn = (JSON.parse(policy) as { deadLetterTargetArn?: unknown }).deadLetterTargetArn;
  } catch {
    throw new DeadLetterQueueError(`queue ${queueUrl}: its RedrivePolicy is not JSON`);
  }
  // arn:<partition>:sqs:<region>:<account>:<name>
  const parts = typeof arn === 'string' ? arn.split(':') : [];
  const [, , service, , account, name] = parts;
  if (parts.length !== 6 || service !== 'sqs' || !account || !name) {
    throw new DeadLetterQueueError(
      `queue ${queueUrl}: its RedrivePolicy's deadLetterTargetArn ${JSON.stringify(arn)} is not an SQS queue ARN`,
    );
  }
  const { QueueUrl } = await sqs.send(
    new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }),
  );
  if (QueueUrl === undefined)
    throw new DeadLetterQueueError(
      `SQS returned no URL for the dead-letter queue ${String(arn)} of ${queueUrl}`,
    );
  return QueueUrl;
}
