// Lambda entry point of the notify function (nodejs24.x, ReportBatchItemFailures).
import { createFunctionClientsOnAws } from '../runtime/clients.ts';
import { loadFunctionConfig } from '../runtime/config.ts';
import { lambdaEntry } from '../runtime/lambda-entry.ts';
import { createPowertoolsLogger } from '../runtime/powertools-logger.ts';
import { createNotifyHandler } from './create-handler.ts';

export const handler = lambdaEntry(async () => {
  const config = loadFunctionConfig(process.env);
  const logger = createPowertoolsLogger({ fn: 'notify', level: config.CONVOY_LOG_LEVEL });
  return { batch: createNotifyHandler(config, await createFunctionClientsOnAws(config), logger), logger };
});
