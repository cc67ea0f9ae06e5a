// Lambda entry point of the health function (nodejs24.x, ReportBatchItemFailures).
import { createFunctionClientsOnAws, onceAsync } from '../runtime/clients.ts';
import { loadFunctionConfig } from '../runtime/config.ts';
import { createLogger } from '../runtime/logger.ts';
import type { SQSEvent } from '../runtime/sqs-event.ts';
import { createHealthHandler } from './create-handler.ts';

const container = onceAsync(async () => {
  const config = loadFunctionConfig(process.env);
  const logger = createLogger({ base: { fn: 'health' }, level: config.CONVOY_LOG_LEVEL });
  return createHealthHandler(config, await createFunctionClientsOnAws(config), logger);
});

export const handler = async (event: SQSEvent) => (await container())(event);
