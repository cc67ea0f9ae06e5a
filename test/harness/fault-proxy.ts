/**
 * A small HTTP proxy in front of a real registry (or any plain-HTTP server) that injects faults on
 * demand: answer the next N requests with a status (429, 503, …) instead of forwarding them, or hold
 * requests whose path starts with a prefix without ever answering. Everything else is forwarded
 * unchanged, so the registry behind it is real. `log` lists each request with what it got.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface FaultProxy {
  /** `127.0.0.1:<port>`. */
  host: string;
  /** `<method> <path> <status or 'held'>`, in order. */
  readonly log: readonly string[];
  /** The next `count` requests (whose path starts with `prefix`, default any) are answered `status` (with Retry-After when given). */
  failNext(count: number, status: number, opts?: { prefix?: string; retryAfterSeconds?: number }): void;
  /** Requests whose path starts with `prefix` are held open and never answered, until release(). */
  hang(prefix: string): void;
  /** Stops holding; held requests are closed. */
  release(): void;
  stop(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const log: string[] = [];
  const faults: {
    remaining: number;
    status: number;
    prefix: string;
    retryAfterSeconds?: number | undefined;
  }[] = [];
  const hanging = new Set<string>();
  const held: ServerResponse[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    const line = `${req.method ?? 'GET'} ${path.split('?')[0] ?? path}`;
    if ([...hanging].some((p) => path.startsWith(p))) {
      log.push(`${line} held`);
      held.push(res);
      return;
    }
    const fault = faults.find((f) => f.remaining > 0 && path.startsWith(f.prefix));
    if (fault !== undefined) {
      fault.remaining--;
      log.push(`${line} ${fault.status}`);
      res.writeHead(fault.status, {
        'content-type': 'application/json',
        ...(fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {}),
      });
      res.end(
        JSON.stringify({
          errors: [
            {
              code: fault.status === 429 ? 'TOOMANYREQUESTS' : 'UNAVAILABLE',
              message: 'injected by the test proxy',
            },
          ],
        }),
      );
      return;
    }
    const upstream = request(
      {
        host: target.split(':')[0],
        port: Number(target.split(':')[1]),
        method: req.method,
        path,
        headers: { ...req.headers, host: target },
      },
      (answer) => {
        log.push(`${line} ${answer.statusCode ?? 0}`);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    host: `127.0.0.1:${port}`,
    log,
    failNext(count, status, opts = {}) {
      faults.push({
        remaining: count,
        status,
        prefix: opts.prefix ?? '/',
        retryAfterSeconds: opts.retryAfterSeconds,
      });
    },
    hang(prefix) {
      hanging.add(prefix);
    },
    release() {
      hanging.clear();
      for (const res of held.splice(0)) res.destroy();
    },
    async stop() {
      for (const res of held.splice(0)) res.destroy();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
