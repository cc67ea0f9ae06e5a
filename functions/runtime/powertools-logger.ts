/**
 * Our `Logger` port backed by Powertools for AWS Lambda Logger, for the functions on Lambda
 * (`convoy dev`, tests and the relay keep platform/logger.ts). Every line carries Powertools' standard
 * keys: the Lambda context of the current invocation (function_request_id, cold_start,
 * function_name, function_arn, function_memory_size; set by `addContext` at the start of each
 * invocation, see lambda-entry.ts) and xray_trace_id (read from `_X_AMZN_TRACE_ID` per line).
 *
 * child(fields) is a separate Powertools child (createChild with the fields as persistent keys):
 * records run in parallel, so nothing is ever appended to a shared logger. A child copies the
 * Lambda context of its parent when it is created, so children are made per record, during the
 * invocation (sqs-batch-handler.ts does).
 *
 * Errors are written as logger.ts writes them ({name, message, code, cause}; the stack at error
 * and debug level), never with their other properties: Powertools' own error formatter copies
 * every enumerable property, and an HTTP client error can hold a response body or headers.
 */
import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import type { ConstructorOptions } from '@aws-lambda-powertools/logger/types';
import { serializeError, type LogFields, type Logger, type LogLevel } from '../../platform/logger.ts';

/** The part of the Lambda context object the log lines carry (what Powertools reads from it). */
export interface LambdaContext {
  readonly awsRequestId: string;
  readonly functionName: string;
  readonly functionVersion: string;
  readonly invokedFunctionArn: string;
  readonly memoryLimitInMB: string;
  readonly tenantId?: string;
}

/** The logger a Lambda entry point builds: the port, plus the per-invocation context. */
export interface LambdaLogger extends Logger {
  /** The Lambda context on every line of this logger and of the children created after this call. */
  addContext(context: LambdaContext): void;
}

export interface PowertoolsLoggerOptions {
  /** The function (`reconcile`, `drift`, `health`): the `fn` field of every line, as in `convoy dev`. */
  readonly fn: string;
  /** CONVOY_LOG_LEVEL; Lambda's Advanced Logging Controls, when configured, win (Powertools' rule). */
  readonly level: LogLevel;
}

/**
 * Powertools' createChild() hands the parent's stored context, coldStart included, to the new
 * child's addContext(), which ignores that coldStart and asks the child's own cold-start flag
 * instead — true on its first ask on an on-demand container — so every child made on a warm
 * container would say cold_start: true. The child takes its parent's value.
 */
class ColdStartInheritingLogger extends PowertoolsLogger {
  public override addContext(context: Parameters<PowertoolsLogger['addContext']>[0]): void {
    // (Typed loosely: Powertools types the Lambda context from @types/aws-lambda, not installed.)
    const inherited = (context as unknown as { readonly coldStart?: unknown }).coldStart;
    if (typeof inherited === 'boolean') this.coldStart = inherited;
    super.addContext(context);
  }

  protected override createLogger(options?: ConstructorOptions): PowertoolsLogger {
    return new ColdStartInheritingLogger(options);
  }
}

/** Errors nested inside a field's value: never their own properties, no stack. */
const errorReplacer = (_key: string, value: unknown): unknown =>
  value instanceof Error ? serializeError(value, false) : value;

export function createPowertoolsLogger(options: PowertoolsLoggerOptions): LambdaLogger {
  const root = new ColdStartInheritingLogger({
    serviceName: 'convoy',
    logLevel: options.level.toUpperCase() as Uppercase<LogLevel>,
    persistentKeys: { fn: options.fn },
    jsonReplacerFn: errorReplacer,
  });
  return { ...wrap(root), addContext: (context) => root.addContext(context) };
}

function wrap(powertools: PowertoolsLogger): Logger {
  const emit = (level: LogLevel, msg: string, fields: LogFields | undefined): void => {
    try {
      const attributes = plainFields(fields, level === 'error' || level === 'debug');
      if (attributes === undefined) powertools[level](msg);
      else powertools[level](msg, attributes);
    } catch (error) {
      // A logger never throws into the code that called it (e.g. a field whose getter throws).
      process.stdout.write(
        `${JSON.stringify({ level: level.toUpperCase(), message: msg, logError: `the line could not be written: ${error instanceof Error ? error.message : String(error)}` })}\n`,
      );
    }
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (fields) => wrap(powertools.createChild({ persistentKeys: plainFields(fields, false) ?? {} })),
  };
}

/** Top-level Error values as logger.ts writes them (with the stack if asked); the rest as is. */
function plainFields(fields: LogFields | undefined, withStack: boolean): Record<string, unknown> | undefined {
  if (fields === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields))
    out[key] = value instanceof Error ? serializeError(value, withStack) : value;
  return out;
}
