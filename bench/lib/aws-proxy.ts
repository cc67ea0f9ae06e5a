// A counting HTTP proxy in front of fauxqs, for AWS requests this process cannot see on its own
// diagnostics channel: the functions under the Lambda runtime run in processes of their own, so
// the lambdaRuntime section gives them this proxy as their AWS endpoint. Each request is counted
// as bench/lib/aws-requests.ts names it (SQS by its X-Amz-Target action, S3 by method, LIST for
// ListObjectsV2) and forwarded as is.
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingAwsProxy {
  readonly url: string;
  /** Counts since the start (or the last take), by request name; resets them. */
  take(): Record<string, number>;
  stop(): Promise<void>;
}

export function awsRequestName(req: Pick<IncomingMessage, 'method' | 'url' | 'headers'>): string {
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string') return `SQS ${target.split('.').pop() ?? target}`;
  if (req.method === 'GET' && /[?&]list-type=2/.test(req.url ?? '')) return 'S3 LIST';
  return `S3 ${req.method ?? '?'}`;
}

export async function startCountingAwsProxy(upstream: string): Promise<CountingAwsProxy> {
  const target = new URL(upstream);
  const counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const name = awsRequestName(req);
    counts.set(name, (counts.get(name) ?? 0) + 1);
    const forward = httpRequest(
      {
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`bench proxy: ${error.message}`);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    take() {
      const out = Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)));
      counts.clear();
      return out;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
