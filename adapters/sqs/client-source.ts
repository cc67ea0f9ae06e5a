import type { SQSClient } from '@aws-sdk/client-sqs';

/**
 * The SQS client, or a function that makes it on first use. With a function, neither the client
 * nor the SDK's module (~70 ms of a function's cold import) loads until a run sends a message or
 * changes a visibility: an observer run that ends `done` never does (issue 13).
 */
export type SqsClientSource = SQSClient | (() => Promise<SQSClient>);

export type SqsSdk = typeof import('@aws-sdk/client-sqs');

/** The client and the SDK's commands; a failure to load rejects the call that needed them. */
export async function connectSqs(source: SqsClientSource): Promise<{ sqs: SQSClient; sdk: SqsSdk }> {
  return { sqs: typeof source === 'function' ? await source() : source, sdk: await import('@aws-sdk/client-sqs') };
}
