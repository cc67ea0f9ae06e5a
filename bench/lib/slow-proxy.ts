// An HTTP proxy in front of the bench's Git server that answers slowly for some repositories:
// every request whose path starts with one of `slowPrefixes` waits `delayMs` before it is
// forwarded. The others pass straight through.
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlowProxy {
  url: string;
  /** Requests delayed so far. */
  delayed(): number;
  stop(): Promise<void>;
}

export async function startSlowProxy(
  target: string,
  o: { slowPrefixes: readonly string[]; delayMs: number },
): Promise<SlowProxy> {
  const upstream = new URL(target);
  let delayed = 0;
  const timers = new Set<NodeJS.Timeout>();
  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`slow proxy: ${error.message}\n`);
    });
    req.pipe(out);
  };
  const server = createServer((req, res) => {
    if (!o.slowPrefixes.some((p) => (req.url ?? '').startsWith(p))) return forward(req, res);
    delayed++;
    // Read nothing yet: the body waits in the socket until the delay is over.
    req.pause();
    const timer = setTimeout(() => {
      timers.delete(timer);
      req.resume();
      forward(req, res);
    }, o.delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    delayed: () => delayed,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
