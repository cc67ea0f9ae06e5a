/**
 * A Lambda entry point around a loop's batch handler: the container (clients, caches, the
 * logger) is built on the first invocation and kept; each invocation first gives the logger its
 * Lambda context, so every line of that invocation carries what CloudWatch Logs Insights and
 * X-Ray join on — Powertools' function_request_id, cold_start and xray_trace_id
 * (powertools-logger.ts).
 */
import { onceAsync } from '../../platform/once.ts';
import type { LambdaContext, LambdaLogger } from './powertools-logger.ts';
import type { SqsBatchHandler } from './sqs-batch-handler.ts';
import type { SQSBatchResponse, SQSEvent } from './sqs-event.ts';

export type { LambdaContext };

/** What a function's composition root builds once per container. */
export interface LambdaContainer {
  readonly batch: SqsBatchHandler;
  /** The logger `batch` was built with. */
  readonly logger: LambdaLogger;
}

/** `export const handler = lambdaEntry(async () => ({ batch: createXHandler(..., logger), logger }))`. */
export function lambdaEntry(
  create: () => Promise<LambdaContainer>,
): (event: SQSEvent, context: LambdaContext) => Promise<SQSBatchResponse> {
  const container = onceAsync(create);
  return async (event, context) => {
    const { batch, logger } = await container();
    logger.addContext(context);
    return batch(event);
  };
}
