// Lambda entry point of the fleet function (nodejs24.x, ReportBatchItemFailures).
import { createFunctionClientsOnAws } from '../runtime/clients.ts';
import { loadFunctionConfig } from '../runtime/config.ts';
import { lambdaEntry } from '../runtime/lambda-entry.ts';
import { createPowertoolsLogger } from '../runtime/powertools-logger.ts';
import { createFleetHandler } from './create-handler.ts';

export const handler = lambdaEntry(async () => {
  const config = loadFunctionConfig(process.env);
  const logger = createPowertoolsLogger({ fn: 'fleet', level: config.CONVOY_LOG_LEVEL });
  return { batch: createFleetHandler(config, await createFunctionClientsOnAws(config), logger), logger };
});
