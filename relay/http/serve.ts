/**
 * Puts the API app on a Node HTTP server (@hono/node-server), or an HTTPS one with `tls`.
 * Loopback by default: set hostname to listen wider.
 */
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Env, Hono } from 'hono';

export interface ServeOptions {
  /** 0 picks a free port; `url` tells which. */
  readonly port: number;
  readonly hostname?: string;
  /** PEM certificate chain and key: serve HTTPS (the dashboard carries bearer tokens). */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer };
}

export interface ServedApi {
  /** e.g. http://127.0.0.1:8080 or https://127.0.0.1:8443 */
  readonly url: string;
  /** Stops accepting connections, ends idle and open ones, and resolves when the server is closed. */
  close(): Promise<void>;
}

export class ServeError extends Error {
  override name = 'ServeError';
}

export function serveApi<E extends Env>(app: Hono<E>, options: ServeOptions): Promise<ServedApi> {
  const hostname = options.hostname ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    let server: ServerType | undefined = undefined;
    const onError = (err: Error) =>
      reject(
        new ServeError(`the HTTP API could not listen on ${hostname}:${options.port}: ${err.message}`, {
          cause: err,
        }),
      );
    const tls =
      options.tls === undefined
        ? {}
        : {
            createServer: createHttpsServer,
            serverOptions: { cert: options.tls.cert, key: options.tls.key },
          };
    server = serve({ fetch: app.fetch, port: options.port, hostname, ...tls }, (info: AddressInfo) => {
      const s = server!;
      s.off('error', onError);
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `${options.tls === undefined ? 'http' : 'https'}://${host}:${info.port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            s.close((err) => (err ? fail(err) : done()));
            if ('closeAllConnections' in s) s.closeAllConnections();
          }),
      });
    });
    server.once('error', onError);
  });
}
