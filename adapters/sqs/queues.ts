import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueNameExists,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { BatchingSqs } from './batching.ts';
import { sqsDeadLetters, type DeadLetterCopy } from './dead-letter.ts';

/**
 * Queue set-up and the one per-record call the runtime makes, through the
 * real AWS SDK (so the same code talks to SQS and to fauxqs in `convoy dev`).
 */

export interface QueueWithDlq {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly dlqUrl: string;
  readonly dlqArn: string;
}

export interface QueueWithDlqOptions {
  /** Receives before SQS moves a message to the DLQ (1–1000). */
  readonly maxReceiveCount: number;
  /** The queue's default visibility timeout in seconds (0–43200); on Lambda, at least the function timeout. */
  readonly visibilityTimeout: number;
  /** Default `<name>-dlq`. */
  readonly dlqName?: string;
  /** DLQ retention in seconds (60–1209600); default 14 days, the most SQS keeps. */
  readonly dlqRetentionSeconds?: number;
}

export class QueueSetupError extends Error {
  override name = 'QueueSetupError';
}

const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * Creates (or updates to match) a standard queue and its dead-letter queue,
 * wired by a RedrivePolicy. Idempotent: run it again with other options and
 * the existing queues are changed to match.
 */
export async function ensureQueueWithDlq(
  sqs: SQSClient,
  name: string,
  options: QueueWithDlqOptions,
): Promise<QueueWithDlq> {
  const dlqName = options.dlqName ?? `${name}-dlq`;
  const dlqRetentionSeconds = options.dlqRetentionSeconds ?? 1_209_600;
  checkQueueName(name);
  checkQueueName(dlqName);
  checkInteger('maxReceiveCount', options.maxReceiveCount, 1, 1000);
  checkInteger('visibilityTimeout', options.visibilityTimeout, 0, 43_200);
  checkInteger('dlqRetentionSeconds', dlqRetentionSeconds, 60, 1_209_600);

  const dlqUrl = await ensureQueue(sqs, dlqName, { MessageRetentionPeriod: String(dlqRetentionSeconds) });
  const dlqArn = await queueArnOf(sqs, dlqUrl);
  const queueUrl = await ensureQueue(sqs, name, {
    VisibilityTimeout: String(options.visibilityTimeout),
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: dlqArn,
      maxReceiveCount: String(options.maxReceiveCount),
    }),
  });
  const queueArn = await queueArnOf(sqs, queueUrl);
  return { queueUrl, queueArn, dlqUrl, dlqArn };
}

/**
 * The batch handler's VisibilityPort, backed by ChangeMessageVisibility; with `batching`, the
 * visibility changes of a batch's records go out together (batching.ts). A message that can never
 * succeed is copied to the queue's dead-letter queue (dead-letter.ts).
 */
export function sqsVisibilityPort(
  sqs: SQSClient,
  batching?: BatchingSqs,
): {
  changeVisibility(queueUrl: string, receiptHandle: string, visibilitySeconds: number): Promise<void>;
  resend(queueUrl: string, body: string, delaySeconds: number): Promise<void>;
  deadLetter(queueUrl: string, copy: DeadLetterCopy): Promise<void>;
} {
  const deadLetters = sqsDeadLetters(sqs);
  return {
    deadLetter: (queueUrl, copy) => deadLetters.deadLetter(queueUrl, copy),
    async resend(queueUrl, body, delaySeconds) {
      if (batching !== undefined) return batching.sendMessage(queueUrl, body, delaySeconds);
      await sqs.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body, DelaySeconds: delaySeconds }),
      );
    },
    async changeVisibility(queueUrl, receiptHandle, visibilitySeconds) {
      if (batching !== undefined)
        return batching.changeVisibility(queueUrl, receiptHandle, visibilitySeconds);
      await sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: receiptHandle,
          VisibilityTimeout: visibilitySeconds,
        }),
      );
    },
  };
}

export async function queueArnOf(sqs: SQSClient, queueUrl: string): Promise<string> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = Attributes?.QueueArn;
  if (arn === undefined) throw new QueueSetupError(`SQS returned no QueueArn for ${queueUrl}`);
  return arn;
}

async function ensureQueue(
  sqs: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<string> {
  try {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
    if (QueueUrl === undefined)
      throw new QueueSetupError(`SQS returned no QueueUrl when creating queue ${name}`);
    return QueueUrl;
  } catch (error) {
    // CreateQueue refuses an existing queue whose attributes differ: bring that queue in line instead.
    if (!isQueueNameExists(error)) throw error;
  }
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  if (QueueUrl === undefined)
    throw new QueueSetupError(`SQS returned no QueueUrl for existing queue ${name}`);
  await sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: attributes }));
  return QueueUrl;
}

function isQueueNameExists(error: unknown): boolean {
  if (error instanceof QueueNameExists) return true;
  if (!(error instanceof Error)) return false;
  // With SQS's query-compatible JSON errors the name may be the legacy code,
  // e.g. AWS.SimpleQueueService.QueueNameExists or QueueAlreadyExists.
  return /(^|\.)(QueueNameExists|QueueAlreadyExists)$/.test(error.name);
}

function checkQueueName(name: string): void {
  if (!QUEUE_NAME.test(name)) {
    throw new QueueSetupError(
      `queue name ${JSON.stringify(name)} is invalid: use 1–80 letters, digits, hyphens or underscores ` +
        '(the DLQ name <name>-dlq must fit too)',
    );
  }
}

function checkInteger(field: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new QueueSetupError(`${field} must be an integer from ${min} to ${max}, got ${value}`);
  }
}
