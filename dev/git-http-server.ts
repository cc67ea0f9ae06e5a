/**
 * A Git smart-HTTP server: a node:http server that runs the system's `git http-backend` as CGI for
 * every request. Serves the bare repositories under `projectRoot` (`<projectRoot>/<name>.git` is
 * `<url>/<name>.git`). Used by the tests and by `convoy dev` to serve example repositories.
 *
 * Optional protection with basic auth or a bearer token (401 + WWW-Authenticate when missing or
 * wrong). Pushes (git-receive-pack) are allowed only when `auth` is set, like http-backend does
 * for an authenticated REMOTE_USER. Running the backend as CGI is git-cgi.ts.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constants as zlibConstants, gunzipSync } from 'node:zlib';
import { cgiEnv, findBackend, relayCgiResponse } from './git-cgi.ts';

export { GitHttpBackendNotFoundError } from './git-cgi.ts';

export type GitHttpAuth = { username: string; password: string } | { bearerToken: string };

export interface GitHttpRequestRecord {
  method: string;
  /** Path without the query string, e.g. `/apps.git/info/refs`. */
  path: string;
  query: string;
  /** HTTP status, set when the response's headers are sent (before its body); 0 until then. */
  status: number;
  /** `git-upload-pack` / `git-receive-pack` for smart-HTTP calls, else undefined. */
  service: string | undefined;
  /**
   * What a smart-HTTP call did: `advertise` (GET info/refs), `ls-refs` (protocol v2 ref listing),
   * `fetch` (a pack download: v1 `want` lines or v2 `command=fetch`), `push`; undefined otherwise.
   */
  command: 'advertise' | 'ls-refs' | 'fetch' | 'push' | undefined;
}

export interface GitHttpServerOptions {
  projectRoot: string;
  auth?: GitHttpAuth;
  /** Path of git-http-backend; default /usr/lib/git-core/git-http-backend or `git --exec-path`. */
  backend?: string;
  /** How many request records `requests` keeps (oldest dropped first); default 10000. */
  maxRecordedRequests?: number;
  /** Called after each response with its final record. */
  onRequest?: (record: GitHttpRequestRecord) => void;
  /** Port on 127.0.0.1; default 0 (any free port). */
  port?: number;
}

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  port: number;
  /**
   * Every request so far, oldest first. A request is listed as soon as its body has been read —
   * before its response is complete — so a client that has its answer always finds it here.
   */
  readonly requests: readonly GitHttpRequestRecord[];
  stop(): Promise<void>;
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The authenticated user name, or undefined when the request must be refused. */
function authenticate(auth: GitHttpAuth, header: string | undefined): string | undefined {
  if (!header) return undefined;
  const space = header.indexOf(' ');
  const scheme = header.slice(0, space).toLowerCase();
  const value = header.slice(space + 1).trim();
  if ('bearerToken' in auth) {
    return scheme === 'bearer' && safeEqual(value, auth.bearerToken) ? 'token' : undefined;
  }
  if (scheme !== 'basic') return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const username = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  // Evaluate both comparisons so timing does not tell which part was wrong.
  const userOk = safeEqual(username, auth.username);
  const passOk = safeEqual(password, auth.password);
  return userOk && passOk ? username : undefined;
}

const PEEK_LIMIT = 512;

/** Classifies an upload-pack/receive-pack request from the first bytes of its body. */
function classify(
  method: string,
  service: string | undefined,
  head: Buffer,
  contentEncoding: string | undefined,
): GitHttpRequestRecord['command'] {
  if (!service) return undefined;
  if (method === 'GET') return 'advertise';
  if (service === 'git-receive-pack') return 'push';
  let text: string;
  try {
    text = (
      contentEncoding === 'gzip' ? gunzipSync(head, { finishFlush: zlibConstants.Z_SYNC_FLUSH }) : head
    ).toString('latin1');
  } catch {
    return undefined;
  }
  if (text.includes('command=ls-refs')) return 'ls-refs';
  if (text.includes('command=fetch') || /^[0-9a-f]{4}want /.test(text)) return 'fetch';
  return undefined;
}

export async function startGitHttpServer(options: GitHttpServerOptions): Promise<GitHttpServer> {
  const backend = await findBackend(options.backend);
  const requests: GitHttpRequestRecord[] = [];
  const children = new Set<ChildProcess>();

  const maxRecorded = options.maxRecordedRequests ?? 10_000;
  const remember = (entry: GitHttpRequestRecord) => {
    requests.push(entry);
    if (requests.length > maxRecorded) requests.splice(0, requests.length - maxRecorded);
  };
  const finish = (entry: GitHttpRequestRecord, status: number) => {
    entry.status = status;
    options.onRequest?.(entry);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const rawPath = q >= 0 ? rawUrl.slice(0, q) : rawUrl;
    const query = q >= 0 ? rawUrl.slice(q + 1) : '';
    let path: string;
    try {
      path = decodeURIComponent(rawPath);
    } catch {
      path = rawPath;
    }
    const method = req.method ?? 'GET';
    const service =
      /(?:^|&)service=(git-[a-z-]+)/.exec(query)?.[1] ?? /\/(git-(?:upload|receive)-pack)$/.exec(path)?.[1];

    let remoteUser: string | undefined;
    if (options.auth) {
      remoteUser = authenticate(options.auth, req.headers.authorization);
      if (!remoteUser) {
        const challenge = 'bearerToken' in options.auth ? 'Bearer realm="convoy"' : 'Basic realm="convoy"';
        res.writeHead(401, { 'www-authenticate': challenge, 'content-type': 'text/plain' });
        res.end('authentication required\n');
        req.resume();
        const entry: GitHttpRequestRecord = { method, path, query, status: 0, service, command: undefined };
        remember(entry);
        finish(entry, 401);
        return;
      }
    }

    const errors: Buffer[] = [];
    let errorBytes = 0;
    const child = spawn(backend, [], {
      env: cgiEnv(req, options.projectRoot, path, query, remoteUser),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.add(child);
    child.on('close', () => children.delete(child));
    child.stderr.on('data', (chunk: Buffer) => {
      if (errorBytes < 16 * 1024) {
        errors.push(chunk);
        errorBytes += chunk.length;
      }
    });
    // The backend may exit before reading the whole body (e.g. on an error): ignore EPIPE.
    child.stdin.on('error', () => {});
    let head = Buffer.alloc(0);
    const peek = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      if (head.length >= PEEK_LIMIT) req.off('data', peek);
    };
    req.on('data', peek);
    const entry: GitHttpRequestRecord = { method, path, query, status: 0, service, command: undefined };
    req.on('end', () => {
      entry.command = classify(method, service, head, req.headers['content-encoding']);
      remember(entry);
    });
    req.pipe(child.stdin);
    res.on('close', () => {
      if (child.exitCode === null && !res.writableFinished) child.kill();
    });

    const status = await relayCgiResponse(
      child,
      res,
      () => Buffer.concat(errors).toString('utf8'),
      (sent) => {
        entry.status = sent;
      },
    );
    if (!req.complete) remember(entry); // the body never ended (the client went away)
    finish(entry, status);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`${err instanceof Error ? err.message : String(err)}\n`);
      } else {
        res.destroy();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        for (const child of children) child.kill();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
