// Client-side count of Kubernetes API requests: every request @kubernetes/client-node
// sends goes through undici, which publishes `undici:request:create` on
// node:diagnostics_channel; convoy's own transport (adapters/kube/http.ts, what the
// functions use) goes through node:https, which publishes `http.client.request.start`. Unlike the API server's apiserver_request_total, this
// also sees discovery (`/api/v1`, `/apis/<group>/<version>`) and `/version`.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';

export interface ClientRequestCount {
  total: number;
  /** `VERB resource[/subresource][ (dry run)]` (VERB: the HTTP method, or LIST/WATCH for a collection), `GET discovery`, or `METHOD <path>`. */
  byRequest: Record<string, number>;
}

export interface ClientRequestCounter {
  /** Counts the requests to `origin` made while `work` runs. */
  during<T>(work: () => Promise<T>): Promise<{ value: T; count: ClientRequestCount }>;
  stop(): void;
}

const CHANNEL = 'undici:request:create';
const NODE_HTTP_CHANNEL = 'http.client.request.start';

interface NodeHttpRequest {
  protocol: string;
  method: string;
  path: string;
  getHeader(name: string): unknown;
}

interface UndiciRequestMessage {
  request?: { origin?: unknown; method?: unknown; path?: unknown };
}

/** `https://127.0.0.1:6443` → one counter for the requests to that server. */
export function countClientRequests(server: string): ClientRequestCounter {
  const origin = new URL(server).origin;
  let current: Map<string, number> | undefined;
  const onMessage = (message: unknown): void => {
    if (current === undefined) return;
    const request = (message as UndiciRequestMessage).request;
    if (request === undefined || String(request.origin) !== origin) return;
    const key = describeRequest(String(request.method), String(request.path));
    current.set(key, (current.get(key) ?? 0) + 1);
  };
  const onNodeHttp = (message: unknown): void => {
    if (current === undefined) return;
    const request = (message as { request?: NodeHttpRequest }).request;
    if (request === undefined || `${request.protocol}//${String(request.getHeader('host'))}` !== origin)
      return;
    const key = describeRequest(request.method, request.path);
    current.set(key, (current.get(key) ?? 0) + 1);
  };
  subscribe(CHANNEL, onMessage);
  subscribe(NODE_HTTP_CHANNEL, onNodeHttp);
  return {
    async during(work) {
      const counts = new Map<string, number>();
      current = counts;
      try {
        const value = await work();
        const byRequest = Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)));
        return { value, count: { total: [...counts.values()].reduce((a, b) => a + b, 0), byRequest } };
      } finally {
        current = undefined;
      }
    },
    stop() {
      unsubscribe(CHANNEL, onMessage);
      unsubscribe(NODE_HTTP_CHANNEL, onNodeHttp);
    },
  };
}

export function describeRequest(method: string, pathAndQuery: string): string {
  const [path = '', query = ''] = pathAndQuery.split('?', 2);
  const segments = path.split('/').filter(Boolean);
  let rest: string[];
  if (segments[0] === 'api') rest = segments.slice(2);
  else if (segments[0] === 'apis') rest = segments.slice(3);
  else return `${method} ${path}`;
  if (rest.length === 0 || (segments[0] === 'apis' && segments.length < 3)) return `${method} discovery`;
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource, name, subresource] = rest;
  const dryRun = /(^|&)dryRun=/.test(query);
  // Named like the API server's metric: a GET of a collection is a LIST, a GET with watch=true a WATCH.
  const verb =
    method === 'GET' && name === undefined ? (/(^|&)watch=(true|1)/.test(query) ? 'WATCH' : 'LIST') : method;
  return `${verb} ${resource ?? ''}${subresource ? `/${subresource}` : ''}${dryRun ? ' (dry run)' : ''}`;
}
