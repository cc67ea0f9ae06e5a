// A real HTTP server on 127.0.0.1 that records every request and can be told to misbehave for its
// next requests (an HTTP status, a huge or endless body, a redirect, no answer at all): the base of
// the notification destinations' stand-ins (notify-receivers.ts, eventbridge-endpoint.ts, forge-status.ts).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export type Fault =
  | { readonly status: number; readonly body?: string; readonly headers?: Record<string, string> }
  | { readonly redirect: string; readonly status?: number }
  /** 200 with a body of `bytes` bytes and its Content-Length. */
  | { readonly bigBody: number; readonly status?: number }
  /** 200 without a length, written until the client hangs up (bytes counted in `endlessSent`). */
  | 'endless'
  /** The request is read and never answered. */
  | 'hang';

export interface Receiver {
  readonly url: string;
  readonly host: string;
  readonly requests: Recorded[];
  /** Bytes an `endless` answer wrote before the client hung up. */
  endlessSent: number;
  failNext(...faults: Fault[]): void;
  close(): Promise<void>;
}

export type Handle = (req: Recorded, res: ServerResponse) => void;

function endless(res: ServerResponse, self: Receiver): void {
  res.writeHead(200, { 'content-type': 'text/plain' });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const pump = () => {
    while (!res.destroyed && self.endlessSent < 1024 ** 3) {
      self.endlessSent += chunk.byteLength;
      if (!res.write(chunk)) return;
    }
  };
  res.on('drain', pump);
  pump();
}

function play(fault: Fault, res: ServerResponse, self: Receiver): void {
  if (fault === 'hang') return;
  if (fault === 'endless') return endless(res, self);
  if ('redirect' in fault) {
    res.writeHead(fault.status ?? 307, { location: fault.redirect }).end();
  } else if ('bigBody' in fault) {
    res.writeHead(fault.status ?? 200, { 'content-length': String(fault.bigBody) });
    res.end(Buffer.alloc(fault.bigBody, 'y'));
  } else {
    res.writeHead(fault.status, fault.headers ?? { 'content-type': 'text/plain' }).end(fault.body ?? '');
  }
}

export async function startReceiver(handle: Handle): Promise<Receiver> {
  const faults: Fault[] = [];
  const self: Receiver = {
    url: '',
    host: '',
    requests: [],
    endlessSent: 0,
    failNext: (...more) => faults.push(...more),
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: Recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      self.requests.push(recorded);
      const fault = faults.shift();
      if (fault !== undefined) play(fault, res, self);
      else handle(recorded, res);
    });
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  return Object.assign(self, { host: `127.0.0.1:${port}`, url: `http://127.0.0.1:${port}` });
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}
