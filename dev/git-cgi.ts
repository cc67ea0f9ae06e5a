/**
 * The system's `git http-backend` as a CGI program (RFC 3875): finding it, the environment of one
 * request, and relaying its response (the CGI header block, then the body streamed). The HTTP side —
 * listening, authentication, the request records — is git-http-server.ts.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { access, constants } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';

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

export async function findBackend(explicit: string | undefined): Promise<string> {
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

/** CGI meta-variables for one request (RFC 3875), plus what git http-backend reads. */
export function cgiEnv(
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
/**
 * Reads the CGI header block from the child's stdout, then streams the rest as the body.
 * `onHeaders` gets the status as the headers go out: the child may still be running when the
 * client has its whole answer (its stdout closed), so the status is known before the child exits.
 */
export function relayCgiResponse(
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
