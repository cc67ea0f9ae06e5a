/**
 * A small Kubernetes API transport on node:https: JSON requests by path with the kubeconfig's
 * TLS settings and credentials, over the config's keep-alive agent (one per cluster), so that a
 * loop run reuses its connections. Used by everything the functions import instead of
 * @kubernetes/client-node (whose generated model serializer and undici dominate the bundles'
 * size and cold start).
 *
 * `createKubeHttp` answers every HTTP status; `createKubeClient` adds thin helpers that throw
 * KubeApiError for an answer outside 2xx.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { nodeHttp } from '../node-http.ts';
import { request as httpsRequest } from 'node:https';
import type { KubeClientConfig } from './kubeconfig.ts';

export type KubeMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeHttpRequest {
  method: KubeMethod;
  /** e.g. `/api/v1/namespaces/a/configmaps/b`; path segments already encoded. */
  path: string;
  query?: Record<string, string | undefined> | undefined;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  /** Content-Type of the body; default application/json. */
  contentType?: string | undefined;
  /** default application/json. */
  accept?: string | undefined;
  signal?: AbortSignal | undefined;
}

export interface KubeHttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The parsed JSON, the text when it is not JSON, undefined when empty. */
  body: unknown;
}

export type KubeHttp = (init: KubeHttpRequest) => Promise<KubeHttpResponse>;

export interface KubeHttpOptions {
  /** Longest wait for one request, connection included. Default 60 s. */
  timeoutMs?: number | undefined;
  userAgent?: string | undefined;
  /** Counts the requests sent (benchmarks). */
  requestCounter?: { count: number } | undefined;
}

/** No answer came: network error, TLS error, or timeout. */
export class KubeTransportError extends Error {
  override name = 'KubeTransportError';
  /** The reason alone, e.g. `ECONNREFUSED` or `no answer within 5 s`. */
  readonly reason: string;
  constructor(message: string, reason: string, options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}

/** The API server answered outside 2xx. The message holds its Status message, never request data. */
export class KubeApiError extends Error {
  override name = 'KubeApiError';
  readonly status: number;
  /** The Status `reason`, e.g. NotFound, AlreadyExists, Conflict. */
  readonly reason: string | undefined;
  readonly headers: IncomingHttpHeaders;
  /** The Status object (or text) the server answered. */
  readonly body: unknown;
  constructor(message: string, response: KubeHttpResponse) {
    super(message);
    this.status = response.status;
    this.headers = response.headers;
    this.body = response.body;
    const body = response.body;
    this.reason = isMapping(body) && typeof body.reason === 'string' ? body.reason : undefined;
  }
}

export const isKubeApiError = (error: unknown, status?: number): error is KubeApiError =>
  error instanceof KubeApiError && (status === undefined || error.status === status);

const DEFAULT_TIMEOUT_MS = 60_000;

export function createKubeHttp(config: KubeClientConfig, opts: KubeHttpOptions = {}): KubeHttp {
  const base = new URL(config.server);
  const basePath = base.pathname.replace(/\/+$/, '');
  const send = base.protocol === 'http:' ? nodeHttp.request : httpsRequest;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const userAgent = opts.userAgent ?? 'convoy';

  const once = (
    init: KubeHttpRequest,
    payload: Buffer | undefined,
    minted: string | undefined,
  ): Promise<KubeHttpResponse & { reused: boolean }> =>
    new Promise((resolvePromise, rejectPromise) => {
      const search = new URLSearchParams();
      for (const [name, value] of Object.entries(init.query ?? {}))
        if (value !== undefined) search.set(name, value);
      const query = search.size > 0 ? `?${search.toString()}` : '';
      const headers: Record<string, string> = {
        Accept: init.accept ?? 'application/json',
        'User-Agent': userAgent,
      };
      const token = minted ?? config.bearerToken();
      if (token !== undefined && token !== '') headers.Authorization = `Bearer ${token}`;
      else if (config.username !== undefined && config.password !== undefined) {
        headers.Authorization = `Basic ${Buffer.from(`${config.username}:${config.password}`).toString('base64')}`;
      }
      // Who the request acts as: decided once per target (domain/tenancy/identity.ts → actingAs).
      if (config.impersonate !== undefined) headers['Impersonate-User'] = config.impersonate;
      if (payload !== undefined) {
        headers['Content-Type'] = init.contentType ?? 'application/json';
        headers['Content-Length'] = String(payload.length);
      }
      let timedOut = false;
      const req = send({
        protocol: base.protocol,
        hostname: base.hostname.replace(/^\[|\]$/g, ''),
        port: base.port,
        path: `${basePath}${init.path}${query}`,
        method: init.method,
        headers,
        ...(base.protocol === 'https:' ? { agent: config.agent } : {}),
        // A server a tenant named: every new connection resolves and connects under the egress policy.
        ...(config.connectGuard !== undefined ? { lookup: config.connectGuard.lookup } : {}),
      });
      if (config.connectGuard !== undefined) req.once('socket', config.connectGuard.onSocket);
      const timer = setTimeout(() => {
        timedOut = true;
        req.destroy(new Error('timeout'));
      }, timeoutMs);
      const onAbort = () =>
        req.destroy(init.signal?.reason instanceof Error ? init.signal.reason : new Error('aborted'));
      init.signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        init.signal?.removeEventListener('abort', onAbort);
      };
      req.on('error', (error: NodeJS.ErrnoException) => {
        done();
        const reason = timedOut
          ? `no answer within ${timeoutMs / 1000} s`
          : init.signal?.aborted
            ? 'aborted'
            : (error.code ?? error.message);
        const failure = new KubeTransportError(
          `${init.method} ${init.path} on ${config.server} failed: ${reason}`,
          reason,
          { cause: error },
        );
        rejectPromise(Object.assign(failure, { reused: req.reusedSocket, code: error.code }));
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', () => undefined); // reported through req's 'error'
        res.on('end', () => {
          done();
          resolvePromise({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: parseBody(Buffer.concat(chunks).toString('utf8')),
            reused: req.reusedSocket,
          });
        });
      });
      req.end(payload);
    });

  return async (init) => {
    const payload =
      init.body === undefined
        ? undefined
        : Buffer.from(typeof init.body === 'string' ? init.body : JSON.stringify(init.body), 'utf8');
    if (opts.requestCounter) opts.requestCounter.count++;
    const minted = config.tokenSource === undefined ? undefined : await config.tokenSource();
    try {
      const { status, headers, body } = await once(init, payload, minted);
      return { status, headers, body };
    } catch (error) {
      // A kept-alive connection the server closed just before it was reused: the request never
      // reached it, so it is sent once more on a new connection.
      const failed = error as { reused?: boolean; code?: string };
      if (failed.reused === true && (failed.code === 'ECONNRESET' || failed.code === 'EPIPE')) {
        const { status, headers, body } = await once(init, payload, minted);
        return { status, headers, body };
      }
      throw error;
    }
  };
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

type Mapping = Record<string, unknown>;
const isMapping = (value: unknown): value is Mapping =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// --- typed helpers -----------------------------------------------------------------------------

export interface PatchOptions {
  /** `merge`: application/merge-patch+json; `apply`: server-side apply (application/apply-patch+yaml). */
  type: 'merge' | 'apply';
  fieldManager?: string | undefined;
  force?: boolean | undefined;
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore' | undefined;
  dryRun?: boolean | undefined;
}

export interface KubeClient {
  readonly http: KubeHttp;
  get<T = Record<string, unknown>>(path: string, query?: Record<string, string | undefined>): Promise<T>;
  list<T = Record<string, unknown>>(
    path: string,
    query?: Record<string, string | undefined>,
  ): Promise<{ items: T[]; metadata?: Record<string, unknown> }>;
  create<T = Record<string, unknown>>(
    path: string,
    body: unknown,
    query?: Record<string, string | undefined>,
  ): Promise<T>;
  replace<T = Record<string, unknown>>(
    path: string,
    body: unknown,
    query?: Record<string, string | undefined>,
  ): Promise<T>;
  patch<T = Record<string, unknown>>(path: string, body: unknown, opts: PatchOptions): Promise<T>;
  /** DELETE with an optional DeleteOptions body (preconditions, propagationPolicy). */
  delete(path: string, body?: unknown, query?: Record<string, string | undefined>): Promise<unknown>;
}

export const PATCH_CONTENT_TYPES = {
  merge: 'application/merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

/** JSON helpers over createKubeHttp; every answer outside 2xx throws KubeApiError. */
export function createKubeClient(config: KubeClientConfig, opts: KubeHttpOptions = {}): KubeClient {
  const http = createKubeHttp(config, opts);
  const call = async (init: KubeHttpRequest): Promise<unknown> => {
    const response = await http(init);
    if (response.status >= 200 && response.status <= 299) return response.body;
    throw new KubeApiError(`${init.method} ${init.path}: ${describeFailure(init.path, response)}`, response);
  };
  return {
    http,
    get: async <T>(path: string, query?: Record<string, string | undefined>) =>
      (await call({ method: 'GET', path, query })) as T,
    list: async <T>(path: string, query?: Record<string, string | undefined>) => {
      const body = (await call({ method: 'GET', path, query })) as
        { items?: T[] | null; metadata?: Record<string, unknown> } | undefined;
      return {
        items: body?.items ?? [],
        ...(body?.metadata !== undefined ? { metadata: body.metadata } : {}),
      };
    },
    create: async <T>(path: string, body: unknown, query?: Record<string, string | undefined>) =>
      (await call({ method: 'POST', path, body, query })) as T,
    replace: async <T>(path: string, body: unknown, query?: Record<string, string | undefined>) =>
      (await call({ method: 'PUT', path, body, query })) as T,
    patch: async <T>(path: string, body: unknown, patch: PatchOptions) =>
      (await call({
        method: 'PATCH',
        path,
        body,
        contentType: PATCH_CONTENT_TYPES[patch.type],
        query: {
          fieldManager: patch.fieldManager,
          force: patch.force === undefined ? undefined : String(patch.force),
          fieldValidation: patch.fieldValidation,
          dryRun: patch.dryRun === true ? 'All' : undefined,
        },
      })) as T,
    delete: (path: string, body?: unknown, query?: Record<string, string | undefined>) =>
      call({ method: 'DELETE', path, query, ...(body !== undefined ? { body } : {}) }),
  };
}

const MAX_SERVER_MESSAGE = 1000;

/** `HTTP 404 NotFound: <Status.message>`; for Secrets only the reason (a message may quote values). */
function describeFailure(path: string, response: KubeHttpResponse): string {
  const body = response.body;
  const reason =
    isMapping(body) && typeof body.reason === 'string' && body.reason !== '' ? ` ${body.reason}` : '';
  if (/\/secrets(\/|$)/.test(path)) return `HTTP ${response.status}${reason}`;
  const message =
    isMapping(body) && typeof body.message === 'string'
      ? body.message
      : typeof body === 'string'
        ? body.trim()
        : '';
  const shortened =
    message.length > MAX_SERVER_MESSAGE ? `${message.slice(0, MAX_SERVER_MESSAGE)}…` : message;
  return `HTTP ${response.status}${reason}${shortened === '' ? '' : `: ${shortened}`}`;
}

/** `/api/v1` or `/apis/<group>/<version>`, plus `/namespaces/<ns>` when namespaced. */
export function resourcePath(
  apiVersion: string,
  plural: string,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  const root = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const ns = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  const item = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  const sub = subresource === undefined ? '' : `/${subresource}`;
  return `${root}${ns}/${plural}${item}${sub}`;
}
