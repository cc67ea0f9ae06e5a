/**
 * A Git smart-HTTP server: a node:http server that runs the system's `git http-backend` as CGI for
 * every request. Serves the bare repositories under `projectRoot` (`<projectRoot>/<name>.git` is
 * `<url>/<name>.git`). Used by the tests and by `convoy dev` to serve example repositories.
 *
 * Optional protection with basic auth or a bearer token (401 + WWW-Authenticate when missing or
 * wrong). Pushes (git-receive-pack) are allowed only when `auth` is set, like http-backend does
 * for an authenticated REMOTE_USER.
 */
import { spawn, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { access, constants } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { constants as zlibConstants, gunzipSync } from 'node:zlib';

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

export class GitHttpBackendNotFoundError extends Error {
  constructor(tried: string[]) {
    super(
      `git http-backend was not found (tried ${tried.join(', ')}); install git (Debian: apt-get install git) or pass options.backend`,
    );
    this.name = 'GitHttpBackendNotFoundError';
  }
}

const execFileAsync = promisify(execFile);

function isExecutable(path: string): Promise<boolean> {
  return new Promise((resolve) => access(path, constants.X_OK, (err) => resolve(!err)));
}

async function findBackend(explicit: string | undefined): Promise<string> {
  if (explicit) {
    if (await isExecutable(explicit)) return explicit;
    throw new GitHttpBackendNotFoundError([explicit]);
  }
  const tried = ['/usr/lib/git-core/git-http-backend'];
  if (await isExecutable(tried[0])) return tried[0];
  try {
    const { stdout } = await execFileAsync('git', ['--exec-path']);
    const candidate = join(stdout.trim(), 'git-http-backend');
    tried.push(candidate);
    if (await isExecutable(candidate)) return candidate;
  } catch {
    tried.push('`git --exec-path` (git not on PATH)');
  }
  throw new GitHttpBackendNotFoundError(tried);
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

/** CGI meta-variables for one request (RFC 3875), plus what git http-backend reads. */
function cgiEnv(
  req: IncomingMessage,
  projectRoot: string,
  path: string,
  query: string,
  remoteUser: string | undefined,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    // Hermetic: no user or system git config changes what the backend does.
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_PROJECT_ROOT: projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    SERVER_SOFTWARE: 'convoy-git-http-server',
    SERVER_NAME: '127.0.0.1',
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: path,
    QUERY_STRING: query,
    REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
  };
  const contentType = req.headers['content-type'];
  if (contentType) env.CONTENT_TYPE = contentType;
  const contentLength = req.headers['content-length'];
  if (contentLength) env.CONTENT_LENGTH = contentLength;
  if (remoteUser) {
    env.REMOTE_USER = remoteUser;
    env.AUTH_TYPE = 'Basic';
  }
  // HTTP_* variables: http-backend reads HTTP_CONTENT_ENCODING (gzip bodies) and
  // HTTP_GIT_PROTOCOL (protocol v2). Authorization is never passed on.
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'authorization' || name === 'proxy-authorization') continue;
    if (name === 'content-type' || name === 'content-length') continue;
    env[`HTTP_${name.toUpperCase().replace(/-/g, '_')}`] = Array.isArray(value) ? value.join(', ') : value;
  }
  return env;
}

const HEADER_LIMIT = 64 * 1024;
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

/**
 * Reads the CGI header block from the child's stdout, then streams the rest as the body.
 * `onHeaders` gets the status as the headers go out: the child may still be running when the
 * client has its whole answer (its stdout closed), so the status is known before the child exits.
 */
function relayCgiResponse(
  child: ChildProcess,
  res: ServerResponse,
  stderr: () => string,
  onHeaders: (status: number) => void,
): Promise<number> {
  return new Promise((resolve) => {
    const stdout = child.stdout!;
    let buffered = Buffer.alloc(0);
    let headersDone = false;
    let status = 502;

    const fail = (message: string) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`git http-backend failed: ${message}\n`);
      } else {
        res.destroy();
      }
      status = 502;
    };

    const onData = (chunk: Buffer) => {
      if (headersDone) return;
      buffered = Buffer.concat([buffered, chunk]);
      let end = buffered.indexOf('\r\n\r\n');
      let sepLength = 4;
      const lf = buffered.indexOf('\n\n');
      if (lf >= 0 && (end < 0 || lf < end)) {
        end = lf;
        sepLength = 2;
      }
      if (end < 0) {
        if (buffered.length > HEADER_LIMIT) {
          stdout.off('data', onData);
          child.kill();
          fail('CGI response headers are too long');
        }
        return;
      }
      headersDone = true;
      stdout.off('data', onData);
      const headerText = buffered.subarray(0, end).toString('latin1');
      const rest = buffered.subarray(end + sepLength);
      status = 200;
      let statusText: string | undefined;
      const headers: Record<string, string | string[]> = {};
      for (const line of headerText.split(/\r?\n/)) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') {
          const match = /^(\d{3})\s*(.*)$/.exec(value);
          if (match) {
            status = Number(match[1]);
            statusText = match[2] || undefined;
          }
          continue;
        }
        const key = name.toLowerCase();
        const existing = headers[key];
        if (existing === undefined) headers[key] = value;
        else headers[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
      }
      onHeaders(status);
      if (statusText) res.writeHead(status, statusText, headers);
      else res.writeHead(status, headers);
      if (rest.length > 0) res.write(rest);
      stdout.pipe(res);
    };

    stdout.on('data', onData);
    child.on('error', (err) => {
      fail(err.message);
      resolve(502);
    });
    child.on('close', (code) => {
      // Once the headers are out, stdout.pipe(res) ends the response when stdout ends.
      if (!headersDone) fail(`exit code ${code ?? 'signal'}: ${stderr().trim().slice(0, 500)}`);
      resolve(status);
    });
  });
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
