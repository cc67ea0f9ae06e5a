/**
 * `npm run bench` prints ONE JSON document on stdout. Code under test logs to
 * stdout by default (platform/logger.ts), so while the bench runs,
 * everything written to stdout goes to stderr; only the final document is
 * written to the real stdout.
 */
export interface StdoutGuard {
  /** Writes the result to the real stdout and resolves once it is flushed. */
  emit(text: string): Promise<void>;
}

export function guardStdout(): StdoutGuard {
  const realWrite = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr);
  return {
    emit(text) {
      return new Promise((resolve, reject) => {
        realWrite(text, (error) => (error ? reject(error) : resolve()));
      });
    },
  };
}

/** A line on stderr, prefixed with the bench's clock. */
export function log(message: string): void {
  process.stderr.write(`[bench ${(performance.now() / 1000).toFixed(1)}s] ${message}\n`);
}
