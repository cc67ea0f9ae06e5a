// The drift and health functions' handlers for the local runtime.
import type { Loop } from '../domain/runtime/queue-message.ts';
import type { FunctionClients } from '../functions/runtime/clients.ts';
import type { FunctionConfig } from '../functions/runtime/config.ts';
import type { Logger } from '../functions/runtime/logger.ts';
import type { SqsBatchHandler } from '../functions/runtime/sqs-batch-handler.ts';

export function observerHandlers(
  _config: FunctionConfig,
  _clients: FunctionClients,
  _logger: Logger,
  _queueUrlOf: (loop: Loop) => () => string,
): Partial<Record<Loop, SqsBatchHandler>> {
  return {};
}
