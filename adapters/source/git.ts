/**
 * Fetches a Release's git source (spec.source.git, or a GitRepository) into the checkout cache with
 * isomorphic-git over the egress client (git-http.ts: the egress policy, redirects by its rules).
 *
 * - branch / tag: the ref is resolved to a commit with one `ls-refs` round trip first, so a cache hit
 *   costs no fetch; a miss is a shallow (depth 1, single ref) fetch.
 * - commit (full 40-hex SHA-1): a cache hit costs no network at all; a miss first asks the server for
 *   exactly that commit (servers with uploadpack.allowReachableSHA1InWant, e.g. GitHub, allow it),
 *   then falls back to a full-depth fetch of every branch and tag.
 * - semver refs and non-http(s) URLs (ssh://, git@host:path, file://) → UnsupportedSourceError.
 * - network, authentication and not-found problems → SourceNotReadyError (retried), one line naming
 *   the server and the class of failure (egress refusal, connection refused, TLS failure, HTTP
 *   status, timed out) — never the server's own text.
 * - `path` must be relative, without `..`, and stay inside the checkout after resolving symlinks;
 *   otherwise SourcePathError (terminal). A path that does not exist (yet) at the commit is
 *   SourceNotReadyError: a later commit can add it.
 *
 * Credentials are sent as `Authorization: Bearer` (bearerToken) or through isomorphic-git's onAuth
 * (username/password). They never appear in errors or in `resolved.url`. Every cache (checkouts,
 * ref resolutions) is keyed by the credentials presented too (credentials-key.ts), so a fetch is
 * never answered with what other credentials were allowed to see.
 */
import * as fs from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import git from 'isomorphic-git';
import type { GitAuth as IsoGitAuth, HttpClient } from 'isomorphic-git';
import { STRICT_EGRESS } from '../../domain/egress/policy.ts';
import { createEgress, type Egress } from '../egress/client.ts';
import { describeFailure, egressRefusalOf, EgressTimeoutError } from '../egress/errors.ts';
import { GIT_ANSWER_TIMEOUT_MS, gitHttpClient } from './git-http.ts';
import type { RefCache } from './ref-cache.ts';
import type { GitCache } from './git-cache.ts';
import { credentialsKey } from './credentials-key.ts';
import { redactUrl, SourceNotReadyError, SourcePathError, UnsupportedSourceError } from './errors.ts';
import { checkPathSyntax, describeRef, parseRef, parseUrl, type GitAuth, type GitRef } from './git-input.ts';

export type { GitAuth, GitRef };

export interface GitSourceInput {
  url: string;
  ref: GitRef;
  /** Directory inside the repository; relative, no `..`; default `.`. */
  path?: string;
  auth?: GitAuth;
  /** Spec prefix for messages; default `spec.source.git` (e.g. `spec.content.helm.valuesFrom[2]`). */
  field?: string;
}

export interface GitSourceResult {
  /** Absolute path of `path` inside the checkout (realpath). */
  dir: string;
  /** Absolute path of the repository root of the checkout. */
  root: string;
  resolved: {
    /** The URL without credentials. */
    url: string;
    /** The ref as given (exactly one of branch, tag, commit). */
    ref: GitRef;
    commit: string;
  };
  /** True when the checkout came from the cache (no fetch). */
  cacheHit: boolean;
}

export interface GitSourceOptions {
  /** The egress client every request goes through; default one with the strict policy (public addresses only). */
  egress?: Egress | undefined;
  /** How long a request may wait for the server's answer (or stay silent); default 60 s. */
  answerTimeoutMs?: number | undefined;
  /** Shares ref resolutions (ls-remote) between Releases for a short while (ref-cache.ts). */
  refCache?: RefCache | undefined;
  /** Resolve the ref on the server even when refCache has a fresh answer (a sync request). */
  freshRef?: boolean | undefined;
}

/** Resolves `path` inside `root`, refusing symlinks that lead outside. */
async function resolvePath(root: string, path: string, field: string, where: string): Promise<string> {
  const realRoot = await realpath(root);
  let real: string;
  try {
    real = await realpath(join(realRoot, path));
  } catch (err) {
    throw new SourceNotReadyError(
      `${field}.path`,
      `${field}.path "${path}" does not exist in ${where}; commit it or fix ${field}.path`,
      { cause: err },
    );
  }
  const rel = relative(realRoot, real);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new SourcePathError(
      `${field}.path`,
      `${field}.path "${path}" resolves through a symlink to a location outside the repository checkout (${where}); ` +
        'point it at a directory inside the repository',
    );
  }
  if (!(await stat(real)).isDirectory()) {
    throw new SourceNotReadyError(
      `${field}.path`,
      `${field}.path "${path}" is not a directory in ${where}; point ${field}.path at a directory`,
    );
  }
  return real;
}

interface Transport {
  http: HttpClient;
  /** Whether the requests carry credentials (the server's refusal means something else). */
  presented: boolean;
  url: string;
  /** A fresh object per call: isomorphic-git adds headers to the object it is given. */
  headers: () => Record<string, string>;
  onAuth: ((url: string, auth: IsoGitAuth) => IsoGitAuth) | undefined;
}

function transport(url: string, auth: GitAuth | undefined, client: HttpClient): Transport {
  if (auth && 'bearerToken' in auth) {
    return {
      http: client,
      presented: true,
      url,
      headers: () => ({ Authorization: `Bearer ${auth.bearerToken}` }),
      onAuth: undefined,
    };
  }
  return {
    http: client,
    presented: auth !== undefined,
    url,
    headers: () => ({}),
    // Called once after a 401; a second 401 ends in an HttpError (no onAuthFailure).
    onAuth: auth ? () => ({ username: auth.username, password: auth.password }) : undefined,
  };
}

function errorCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) return String(err.code);
  return undefined;
}

/** Whether the egress client gave up waiting (git-http.ts's answer timeout). */
function timedOut(err: unknown): boolean {
  let current: unknown = err;
  for (let i = 0; i < 4 && current instanceof Error; i++) {
    if (current instanceof EgressTimeoutError) return true;
    current = current.cause;
  }
  return false;
}

/**
 * Maps an isomorphic-git / network error to SourceNotReadyError: one line naming the server and the
 * class of failure, free of credentials and of the server's own words.
 */
function notReady(
  err: unknown,
  field: string,
  t: Pick<Transport, 'url' | 'presented'>,
  refText: string,
  answerTimeoutMs: number,
): Error {
  const { url } = t;
  if (err instanceof SourceNotReadyError || err instanceof UnsupportedSourceError) return err;
  const shown = redactUrl(url);
  const code = errorCode(err);
  const status =
    code === 'HttpError' ? (err as { data?: { statusCode?: number } }).data?.statusCode : undefined;
  let message: string;
  let errField = `${field}.url`;
  if (status === 401 || status === 403 || code === 'UserCanceledError') {
    errField = `${field}.secretRef`;
    const answer =
      status === 403
        ? `refused access to ${refText} (HTTP 403)`
        : `requires authentication for ${refText} (HTTP 401)`;
    message = t.presented
      ? `git server ${shown} ${answer} and did not accept the credentials presented; ` +
        `check the username+password or bearerToken of ${field}.secretRef`
      : `git server ${shown} ${answer} and ${field} presents no credentials; ` +
        `set ${field}.secretRef to a Secret with username+password or bearerToken that the repository accepts`;
  } else if (status === 404) {
    message = `git repository ${shown} was not found (HTTP 404) while fetching ${refText}; check ${field}.url and its credentials`;
  } else if (status !== undefined) {
    message = `git server ${shown} answered HTTP ${status} while fetching ${refText}; will retry`;
  } else if (code === 'SmartHttpError') {
    message = `${shown} is not a git smart-HTTP endpoint (fetching ${refText}); check ${field}.url`;
  } else if (egressRefusalOf(err) !== undefined) {
    message = `git server ${shown}: ${describeFailure(err)} (fetching ${refText}; will retry)`;
  } else if (timedOut(err)) {
    message = `git server ${shown} gave no answer within ${answerTimeoutMs < 1000 ? `${answerTimeoutMs} ms` : `${Math.round(answerTimeoutMs / 1000)} s`} to fetching ${refText} (timed out); will retry`;
  } else if (code === undefined || /^E[A-Z]+$|^ERR_|CERT|TLS|SSL/.test(code)) {
    message = `cannot reach git server ${shown} (${describeFailure(err)}) to fetch ${refText}; will retry`;
  } else {
    // isomorphic-git's own errors (a malformed answer): their messages may quote the server.
    message = `git server ${shown} gave an answer convoy cannot read while fetching ${refText} (${code}); will retry`;
  }
  return new SourceNotReadyError(errField, message, { cause: err });
}

async function resolveRemoteRef(
  t: Transport,
  kind: 'branch' | 'tag',
  name: string,
  field: string,
): Promise<string> {
  const fullRef = kind === 'branch' ? `refs/heads/${name}` : `refs/tags/${name}`;
  const refs = await git.listServerRefs({
    http: t.http,
    url: t.url,
    headers: t.headers(),
    ...(t.onAuth ? { onAuth: t.onAuth } : {}),
    prefix: fullRef,
    peelTags: true,
    protocolVersion: 2,
  });
  const found = refs.find((r) => r.ref === fullRef);
  if (!found) {
    throw new SourceNotReadyError(
      `${field}.ref.${kind}`,
      `${describeRef(kind, name)} was not found in ${redactUrl(t.url)}; push it or fix ${field}.ref.${kind}`,
    );
  }
  return (found.peeled ?? found.oid).toLowerCase();
}

async function hasCommit(gitdir: string, oid: string, objects: object): Promise<boolean> {
  try {
    await git.readCommit({ fs, gitdir, oid, cache: objects });
    return true;
  } catch {
    return false;
  }
}

async function fetchInto(
  t: Transport,
  gitdir: string,
  ref: string,
  extra: { depth?: number; singleBranch: boolean; tags: boolean },
  objects: object,
): Promise<void> {
  await git.init({ fs, gitdir, bare: true });
  await git.addRemote({ fs, gitdir, remote: 'origin', url: t.url });
  await git.fetch({
    fs,
    http: t.http,
    gitdir,
    url: t.url,
    ref,
    headers: t.headers(),
    ...(t.onAuth ? { onAuth: t.onAuth } : {}),
    singleBranch: extra.singleBranch,
    tags: extra.tags,
    ...(extra.depth !== undefined ? { depth: extra.depth } : {}),
    cache: objects,
  });
}

export async function fetchGitSource(
  input: GitSourceInput,
  cache: GitCache,
  options: GitSourceOptions = {},
): Promise<GitSourceResult> {
  const field = input.field ?? 'spec.source.git';
  const parsed = parseUrl(input.url, field);
  const { kind, name } = parseRef(input.ref, field);
  const path = checkPathSyntax(input.path, field);
  const answerTimeoutMs = options.answerTimeoutMs ?? GIT_ANSWER_TIMEOUT_MS;
  const t = transport(
    parsed.url,
    input.auth ?? parsed.embedded,
    gitHttpClient(options.egress ?? createEgress(STRICT_EGRESS), answerTimeoutMs),
  );
  const refText = `${describeRef(kind, name)} of ${redactUrl(parsed.url)}`;

  // Which credentials this fetch presents: every cache below answers only the same credentials.
  const credentials = credentialsKey(input.auth ?? parsed.embedded);
  let commit: string;
  try {
    commit =
      kind === 'commit'
        ? name
        : options.refCache === undefined
          ? await resolveRemoteRef(t, kind, name, field)
          : await options.refCache.resolve(
              { url: parsed.url, ref: `${kind}:${name}`, credentials },
              () => resolveRemoteRef(t, kind, name, field),
              { fresh: options.freshRef === true },
            );
  } catch (err) {
    throw notReady(err, field, t, describeRef(kind, name), answerTimeoutMs);
  }

  let result: { root: string; hit: boolean };
  try {
    result = await cache.getOrFill({ url: parsed.url, commit, credentials }, async ({ root, scratch }) => {
      let gitdir = join(scratch, 'git');
      // isomorphic-git's object cache (parsed packfiles), shared by the fetch and the checkout.
      let objects = {};
      if (kind === 'commit') {
        let direct = false;
        try {
          await fetchInto(t, gitdir, commit, { depth: 1, singleBranch: true, tags: false }, objects);
          direct = await hasCommit(gitdir, commit, objects);
        } catch (err) {
          // Unreachable server or rejected credentials: a full fetch would fail the same way.
          const code = errorCode(err);
          if (
            code === 'HttpError' ||
            code === 'UserCanceledError' ||
            (code && /^E[A-Z]+$|^ERR_EGRESS_/.test(code))
          )
            throw err;
        }
        if (!direct) {
          // The server did not serve the unadvertised commit: fetch every branch and tag in full.
          gitdir = join(scratch, 'git-full');
          objects = {};
          await fetchInto(t, gitdir, commit, { singleBranch: false, tags: true }, objects);
        }
        if (!(await hasCommit(gitdir, commit, objects))) {
          throw new SourceNotReadyError(
            `${field}.ref.commit`,
            `commit ${commit} is not reachable from any branch or tag of ${redactUrl(parsed.url)}; ` +
              `push it or fix ${field}.ref.commit`,
          );
        }
      } else {
        const fullRef = kind === 'branch' ? `refs/heads/${name}` : `refs/tags/${name}`;
        await fetchInto(t, gitdir, fullRef, { depth: 1, singleBranch: true, tags: false }, objects);
        if (!(await hasCommit(gitdir, commit, objects))) {
          throw new SourceNotReadyError(
            `${field}.ref.${kind}`,
            `${refText} moved from ${commit} while it was fetched; will retry`,
          );
        }
      }
      await git.checkout({
        fs,
        dir: root,
        gitdir,
        ref: commit,
        force: true,
        noUpdateHead: true,
        cache: objects,
      });
    });
  } catch (err) {
    throw notReady(err, field, t, describeRef(kind, name), answerTimeoutMs);
  }

  const dir = await resolvePath(result.root, path, field, `${refText} at ${commit}`);
  return {
    dir,
    root: await realpath(result.root),
    resolved: { url: redactUrl(parsed.url), ref: { [kind]: name }, commit },
    cacheHit: result.hit,
  };
}
