/**
 * A Lambda entry point around a loop's batch handler: the container is built on the first
 * invocation and kept, and every log line of an invocation carries what CloudWatch Logs
 * Insights and X-Ray join on — the Lambda request id, whether this invocation was the
 * container's cold start, and the X-Ray trace id (the Root of `_X_AMZN_TRACE_ID`, which the
 * Lambda runtime sets per invocation). The same fields Powertools Logger adds, without the
 * dependency (see docs/decisions.md, "Function logs and metrics without Powertools").
 */
import { onceAsync } from './clients.ts';
import type { LogFields } from './logger.ts';
import type { SqsBatchHandler } from './sqs-batch-handler.ts';
import type { SQSBatchResponse, SQSEvent } from './sqs-event.ts';

/** The part of the Lambda context object convoy reads. */
export interface LambdaContext {
  readonly awsRequestId?: string;
}

/** `Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1` → `1-5759e988-bd862e3fe1be46a994272793`. */
export function xrayTraceId(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const [key, value] = part.split('=', 2);
    if (key?.trim() === 'Root' && value !== undefined && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/** The log fields of one invocation. */
export function invocationFields(context: LambdaContext | undefined, coldStart: boolean, env: NodeJS.ProcessEnv): LogFields {
  const traceId = xrayTraceId(env['_X_AMZN_TRACE_ID']);
  return {
    ...(context?.awsRequestId !== undefined ? { requestId: context.awsRequestId } : {}),
    coldStart,
    ...(traceId !== undefined ? { xrayTraceId: traceId } : {}),
  };
}

/** `export const handler = lambdaEntry(async () => createXHandler(...))`. */
export function lambdaEntry(
  create: () => Promise<SqsBatchHandler>,
  env: NodeJS.ProcessEnv = process.env,
): (event: SQSEvent, context?: LambdaContext) => Promise<SQSBatchResponse> {
  const container = onceAsync(create);
  let invocations = 0;
  return async (event, context) => {
    const coldStart = invocations === 0;
    invocations += 1;
    const batch = await container();
    return batch(event, invocationFields(context, coldStart, env));
  };
}
