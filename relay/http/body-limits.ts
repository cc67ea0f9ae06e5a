/**
 * The bound on every request body the relay's HTTP API reads. The API's bodies are small — a
 * renderRef, a step name, `{}` — so every route but the Git webhook takes at most
 * MAX_API_BODY_BYTES; the webhook bounds its own body (git-hooks.ts, 1 MiB) while it reads it.
 *
 * Applied before authentication and before any route: a body declared larger (Content-Length) is
 * refused without reading a byte of it; a chunked one is read into at most the limit and refused
 * at the first byte past it, never held whole. Either way the answer is 413 at once; the rest of
 * the body is then read and discarded for at most 500 ms or 64 MiB before the connection is closed
 * (@hono/node-server's drain: closing at once would reset the connection before many clients read
 * the 413). A route that reads no body gets the same bound: a flood of large bodies to sync or suspend costs
 * the relay no more than one to rollback (unbounded, one 300 MB rollback body grew the relay from
 * 306 MB to 1,168 MB, past its 512 Mi memory limit, and took every tenant's API down with it).
 */
import type { Env, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ApiErrorBody } from './api-common.ts';

/** The largest request body of any API route except POST /v1/hooks/git. */
export const MAX_API_BODY_BYTES = 64 * 1024;

/** The routes that bound their own body while reading it (git-hooks.ts readLimited). */
const OWN_LIMIT_PATHS: ReadonlySet<string> = new Set(['/v1/hooks/git']);

export interface BodyLimitLogger {
  warn(msg: string, fields?: Readonly<Record<string, unknown>>): void;
}

/** The middleware: 413 PayloadTooLarge (one JSON line, one log line) for a body over `maxBytes`. */
export function apiBodyLimit<E extends Env>(
  logger?: BodyLimitLogger,
  maxBytes: number = MAX_API_BODY_BYTES,
): MiddlewareHandler<E> {
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: (c) => {
      logger?.warn('http api: request body over the limit refused', {
        method: c.req.method,
        path: c.req.path,
        limitBytes: maxBytes,
      });
      return c.json(
        {
          error: 'PayloadTooLarge',
          message: `the request body is larger than ${describeBytes(maxBytes)}, the most any route of this API reads; see docs/api.md for each route's body`,
        } satisfies ApiErrorBody,
        413,
      );
    },
  });
  return async (c, next) => {
    if (OWN_LIMIT_PATHS.has(c.req.path)) return next();
    return limit(c, next);
  };
}

function describeBytes(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}
