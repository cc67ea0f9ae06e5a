/**
 * isomorphic-git's HTTP client, over the egress client (adapters/egress/client.ts): every Git
 * request and every redirect it follows is checked against the egress policy, and credentials
 * (Authorization, which isomorphic-git adds after a 401 through onAuth) never follow a redirect to
 * another origin. isomorphic-git's own node client (simple-get) would follow any redirect, to any
 * scheme and host, with the headers.
 *
 * A Git server that accepts the connection and never answers would hold the reconcile until the
 * function itself times out: each request gives up when the answer has not come within
 * `answerTimeoutMs`, or when the connection is silent that long while the pack streams in.
 */
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import type { Egress } from '../egress/client.ts';

export const GIT_ANSWER_TIMEOUT_MS = 60_000;

async function collect(
  body: GitHttpRequest['body'] | Uint8Array | Iterable<Uint8Array>,
): Promise<Buffer | undefined> {
  if (body === undefined) return undefined;
  if (body instanceof Uint8Array) return Buffer.from(body);
  const chunks: Uint8Array[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

export function gitHttpClient(egress: Egress, answerTimeoutMs: number = GIT_ANSWER_TIMEOUT_MS): HttpClient {
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const method = req.method ?? 'GET';
      const answer = await egress.send(req.url, {
        method,
        headers: req.headers ?? {},
        body: await collect(req.body),
        answerTimeoutMs,
        idleTimeoutMs: answerTimeoutMs,
        ...(req.signal ? { signal: req.signal } : {}),
      });
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      return {
        url: answer.url,
        method,
        headers,
        ...(answer.body !== null
          ? { body: answer.body as unknown as AsyncIterableIterator<Uint8Array> }
          : {}),
        statusCode: answer.status,
        statusMessage: answer.statusText,
      };
    },
  };
}
