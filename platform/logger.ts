/**
 * A tiny structured logger: one JSON object per line, with the fields of
 * every enclosing child() on each line. Records run in parallel, so each
 * gets its own child; nothing is ever added to a shared logger.
 *
 * Errors become {name, message} (plus code and cause); the stack is written
 * only at error and debug level. Callers must not pass Secret data.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line (after the parent's fields). */
  child(fields: LogFields): Logger;
}

export interface LoggerOptions {
  /** Fields on every line, e.g. {service: 'convoy-reconcile'}. */
  readonly base?: LogFields;
  /** Lowest level written; default 'info'. */
  readonly level?: LogLevel;
  /** Receives each line without a trailing newline; default: stdout. */
  readonly write?: (line: string) => void;
  readonly now?: () => Date;
}

const LEVEL_RANK: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && Object.hasOwn(LEVEL_RANK, value);
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const minRank = LEVEL_RANK[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const now = options.now ?? (() => new Date());

  const make = (bound: LogFields): Logger => {
    const emit = (level: LogLevel, msg: string, fields?: LogFields): void => {
      if (LEVEL_RANK[level] < minRank) return;
      const time = now().toISOString();
      // time, level and msg come first and cannot be overwritten by fields.
      const entry = Object.assign({ time, level, msg }, bound, fields, { time, level, msg });
      write(serialize(entry, level === 'error' || level === 'debug'));
    };
    return {
      debug: (msg, fields) => emit('debug', msg, fields),
      info: (msg, fields) => emit('info', msg, fields),
      warn: (msg, fields) => emit('warn', msg, fields),
      error: (msg, fields) => emit('error', msg, fields),
      child: (fields) => make({ ...bound, ...fields }),
    };
  };
  return make(options.base ?? {});
}

/** An Error as plain JSON: name and message, code when present, the cause chain, and the stack if asked. */
export function serializeError(error: Error, withStack: boolean, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = { name: error.name, message: error.message };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out['code'] = code;
  if (withStack && error.stack !== undefined) out['stack'] = error.stack;
  if (error.cause !== undefined && depth < 5) {
    out['cause'] =
      error.cause instanceof Error
        ? serializeError(error.cause, withStack, depth + 1)
        : describe(error.cause);
  }
  return out;
}

function serialize(entry: Record<string, unknown>, withStack: boolean): string {
  const seen = new WeakSet<object>();
  try {
    return JSON.stringify(entry, (_key, value: unknown) => {
      if (value instanceof Error) return serializeError(value, withStack);
      if (typeof value === 'bigint') return value.toString();
      if (typeof value === 'object' && value !== null) {
        if (seen.has(value)) return '[Circular]';
        seen.add(value);
      }
      return value;
    });
  } catch (error) {
    // A logger never throws into the code that called it.
    return JSON.stringify({
      time: entry['time'],
      level: entry['level'],
      msg: entry['msg'],
      logError: `fields could not be serialized: ${error instanceof Error ? error.message : describe(error)}`,
    });
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
