/**
 * The one HTTP client every outbound request on a tenant's behalf goes through (Git over HTTP(S),
 * Helm repositories, OCI registries and their token realms, ECR): node:http(s) with the guarded
 * connect of lookup.ts, and redirects followed here, by domain/egress/redirect.ts's rules —
 * the same scheme or HTTPS only, at most five hops, no loop, every hop checked against the policy
 * again, and credentials (Authorization, the caller's CA) only for the origin they were meant for.
 *
 * One client per policy (a container keeps it): its agents keep connections alive between the
 * requests of a resolve; a kept-alive socket was checked when it connected.
 */
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { Agent, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { parseIp } from '../../domain/egress/ip.ts';
import type { EgressPolicy } from '../../domain/egress/policy.ts';
import { describeUrlProblem, headersForHop, redirectStep, urlProblem } from '../../domain/egress/redirect.ts';
import { nodeHttp } from '../node-http.ts';
import { EgressRefusedError, EgressTimeoutError } from './errors.ts';
import {
  checkAddress,
  checkOnConnect,
  guardedLookup,
  systemResolver,
  type Resolver,
  type Target,
} from './lookup.ts';

// Loaded through require, as adapters/node-http.ts does for node:http (the ESM facade costs cold start).
const https = createRequire(import.meta.url)('node:https') as typeof import('node:https');

export interface EgressRequest {
  method?: string;
  headers?: Readonly<Record<string, string>>;
  body?: string | Uint8Array | undefined;
  signal?: AbortSignal | undefined;
  /** PEM bundle trusted for this URL's origin only (a redirect elsewhere uses the public trust store). */
  ca?: string | undefined;
  /** Gives up when the answer's headers have not arrived within this long. */
  answerTimeoutMs?: number | undefined;
  /** Gives up when the connection is silent this long (headers or body). */
  idleTimeoutMs?: number | undefined;
  /**
   * Which `host[:port]` may be reached over plain HTTP, on the first request and after a redirect
   * (OCI: the installation's CONVOY_INSECURE_REGISTRIES); default any (Git and Helm http:// URLs).
   */
  plainHttp?: ((host: string) => boolean) | undefined;
}

export interface EgressAnswer {
  /** The URL that answered (after redirects). */
  url: string;
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** null for HEAD, 204 and 304. */
  body: IncomingMessage | null;
}

export interface Egress {
  readonly policy: EgressPolicy;
  /** One request, redirects followed by the rules above. */
  send(url: string, request?: EgressRequest): Promise<EgressAnswer>;
  /** The same, as a web Response (what fetch would give). */
  fetch(url: string, request?: EgressRequest): Promise<Response>;
}

export interface EgressOptions {
  /** Name resolution; default dns.lookup with every address (tests inject a stub resolver). */
  resolver?: Resolver | undefined;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** What every request of one client shares. */
interface Context {
  readonly policy: EgressPolicy;
  readonly resolver: Resolver;
  readonly agents: { readonly http: Agent; readonly https: Agent };
}

/** Refuses before any connection: a URL convoy does not follow, plain HTTP the caller does not allow, a refused IP literal. */
function refusalBefore(ctx: Context, url: URL, request: EgressRequest, target: Target): Error | undefined {
  const problem = urlProblem(url);
  if (problem !== undefined) return new EgressRefusedError(describeUrlProblem(problem, url.protocol));
  if (url.protocol === 'http:' && request.plainHttp !== undefined && !request.plainHttp(url.host)) {
    return new EgressRefusedError(
      target.redirected
        ? 'a redirect leads to plain HTTP on a host the installation does not list in CONVOY_INSECURE_REGISTRIES; not followed'
        : 'plain HTTP to this host is not allowed by the installation (CONVOY_INSECURE_REGISTRIES)',
    );
  }
  try {
    // net does not resolve a literal: it is checked here, a name in the lookup (guardedLookup).
    if (parseIp(target.host) !== undefined) checkAddress(ctx.policy, target, target.host);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
  return undefined;
}

/** One request, no redirect followed: the answer's head, or the error. */
function once(ctx: Context, url: URL, request: EgressRequest, redirected: boolean): Promise<IncomingMessage> {
  const secure = url.protocol === 'https:';
  const target: Target = {
    host: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(),
    port: Number(url.port || (secure ? 443 : 80)),
    redirected,
  };
  const refused = refusalBefore(ctx, url, request, target);
  if (refused !== undefined) return Promise.reject(refused);
  return new Promise((resolve, reject) => {
    const req = (secure ? https : nodeHttp).request(url, {
      method: request.method ?? 'GET',
      headers: request.headers ?? {},
      agent: secure ? ctx.agents.https : ctx.agents.http,
      lookup: guardedLookup(ctx.policy, ctx.resolver, target),
      ...(request.signal ? { signal: request.signal } : {}),
      ...(secure && request.ca !== undefined ? { ca: request.ca } : {}),
    });
    let answerTimer: NodeJS.Timeout | undefined;
    if (request.answerTimeoutMs !== undefined) {
      const ms = request.answerTimeoutMs;
      answerTimer = setTimeout(
        () => req.destroy(new EgressTimeoutError(`no answer within ${Math.round(ms / 1000)} s`)),
        ms,
      );
    }
    if (request.idleTimeoutMs !== undefined) {
      const ms = request.idleTimeoutMs;
      req.setTimeout(ms, () => req.destroy(new EgressTimeoutError(`no data for ${Math.round(ms / 1000)} s`)));
    }
    req.once('socket', (socket) => checkOnConnect(ctx.policy, target, socket));
    req.once('response', (res) => {
      clearTimeout(answerTimer);
      resolve(res);
    });
    req.once('error', (error) => {
      clearTimeout(answerTimer);
      reject(error);
    });
    req.end(request.body);
  });
}

/** A request with its redirects followed by domain/egress/redirect.ts's rules, each hop checked again. */
async function send(ctx: Context, url: string, request: EgressRequest = {}): Promise<EgressAnswer> {
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw new EgressRefusedError(describeUrlProblem('unparseable', url));
  }
  const origin = current.origin;
  const visited = [current.href];
  let method = request.method ?? 'GET';
  let body = request.body;
  for (;;) {
    const sameOrigin = current.origin === origin;
    const hop: EgressRequest = {
      ...request,
      method,
      body,
      headers: headersForHop(request.headers ?? {}, sameOrigin),
      ca: sameOrigin ? request.ca : undefined,
    };
    const res = await once(ctx, current, hop, visited.length > 1);
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (REDIRECTS.has(status) && location !== undefined) {
      res.resume();
      const step = redirectStep(current, location, visited, origin);
      if (!step.ok) throw new EgressRefusedError(`a redirect was not followed: ${step.reason}`);
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
      }
      visited.push(step.url.href);
      current = step.url;
      continue;
    }
    const empty = method === 'HEAD' || status === 204 || status === 304;
    if (empty) res.resume();
    return {
      url: current.href,
      status,
      statusText: res.statusMessage ?? '',
      headers: res.headers,
      body: empty ? null : res,
    };
  }
}

/** The answer as a web Response, as fetch gives it. */
function toResponse(answer: EgressAnswer): Response {
  if (answer.status < 200 || answer.status > 599) {
    answer.body?.destroy();
    throw Object.assign(new Error(`answered with HTTP status ${answer.status}`), {
      code: 'ERR_EGRESS_BAD_STATUS',
    });
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const body =
    answer.body === null ? null : (Readable.toWeb(answer.body) as unknown as ReadableStream<Uint8Array>);
  // No statusText: a server's reason phrase is its own text, and nothing reads it.
  return new Response(body, { status: answer.status, headers });
}

export function createEgress(policy: EgressPolicy, options: EgressOptions = {}): Egress {
  const ctx: Context = {
    policy,
    resolver: options.resolver ?? systemResolver,
    // Free sockets close after 4 s (as node's global agent); an active request is not cut by it.
    agents: {
      http: new nodeHttp.Agent({ keepAlive: true, timeout: 4_000 }),
      https: new https.Agent({ keepAlive: true, timeout: 4_000 }),
    },
  };
  return {
    policy,
    send: (url, request) => send(ctx, url, request),
    fetch: async (url, request) => toResponse(await send(ctx, url, request)),
  };
}
