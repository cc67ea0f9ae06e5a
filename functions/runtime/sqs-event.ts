/**
 * The SQS event a Lambda function receives from an event source mapping,
 * and the partial-batch response it returns (ReportBatchItemFailures).
 * Written out here so nothing depends on @types/aws-lambda; the dev poller
 * builds exactly this shape.
 */

/** A message attribute as Lambda spells it (camelCase; binary values base64-encoded). */
export interface SQSMessageAttribute {
  stringValue?: string;
  binaryValue?: string;
  stringListValues: string[];
  binaryListValues: string[];
  dataType: string;
}

export interface SQSRecordAttributes {
  /** "1" on the first delivery; the retry attempt for backoff. */
  ApproximateReceiveCount: string;
  /** Epoch milliseconds, as a string. */
  SentTimestamp: string;
  SenderId: string;
  ApproximateFirstReceiveTimestamp: string;
  AWSTraceHeader?: string;
  SequenceNumber?: string;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
  DeadLetterQueueSourceArn?: string;
}

export interface SQSRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: SQSRecordAttributes;
  messageAttributes: Record<string, SQSMessageAttribute>;
  md5OfBody: string;
  md5OfMessageAttributes?: string;
  eventSource: string; // 'aws:sqs'
  eventSourceARN: string;
  awsRegion: string;
}

export interface SQSEvent {
  Records: SQSRecord[];
}

export interface SQSBatchItemFailure {
  /** The record's messageId. */
  itemIdentifier: string;
}

export interface SQSBatchResponse {
  batchItemFailures: SQSBatchItemFailure[];
}

/** The parts of an SQS queue ARN: arn:<partition>:sqs:<region>:<account>:<name>. */
export interface SqsQueueArnParts {
  readonly partition: string;
  readonly region: string;
  readonly accountId: string;
  readonly queueName: string;
}

export class InvalidQueueArnError extends Error {
  override name = 'InvalidQueueArnError';
  constructor(arn: string, why = 'expected arn:<partition>:sqs:<region>:<account>:<queue name>') {
    super(
      `cannot derive a queue URL from ${JSON.stringify(arn)}: ${why}; ` +
        'pass queueUrlOf to the batch handler when the URL cannot be derived from the ARN',
    );
  }
}

export function parseQueueArn(arn: string): SqsQueueArnParts {
  const parts = arn.split(':');
  const [prefix, partition, service, region, accountId, queueName] = parts;
  if (
    parts.length !== 6 ||
    prefix !== 'arn' ||
    service !== 'sqs' ||
    !partition ||
    !region ||
    !accountId ||
    !queueName
  ) {
    throw new InvalidQueueArnError(arn);
  }
  return { partition, region, accountId, queueName };
}

// DNS suffix of the SQS endpoint per AWS partition.
const PARTITION_DNS_SUFFIX: Readonly<Record<string, string>> = {
  aws: 'amazonaws.com',
  'aws-us-gov': 'amazonaws.com',
  'aws-cn': 'amazonaws.com.cn',
  'aws-iso': 'c2s.ic.gov',
  'aws-iso-b': 'sc2s.sgov.gov',
};

/**
 * The queue URL AWS uses for a queue ARN:
 * arn:aws:sqs:eu-west-1:123456789012:q → https://sqs.eu-west-1.amazonaws.com/123456789012/q.
 *
 * @throws InvalidQueueArnError when the ARN is not an SQS queue ARN or its partition is unknown.
 */
export function queueUrlFromArn(arn: string): string {
  const { partition, region, accountId, queueName } = parseQueueArn(arn);
  const suffix = PARTITION_DNS_SUFFIX[partition];
  if (suffix === undefined)
    throw new InvalidQueueArnError(arn, `unknown AWS partition ${JSON.stringify(partition)}`);
  return `https://sqs.${region}.${suffix}/${accountId}/${queueName}`;
}
