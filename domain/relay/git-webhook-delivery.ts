/**
 * Git push webhook deliveries (API.md "HTTP API": POST /v1/hooks/git), without I/O: which
 * provider sent a delivery, whether its signature holds, and what was pushed, with the
 * repository URLs it names as normalizeRepoUrl keys. Which Releases and ReleaseSets follow a
 * push is git-push.ts.
 *
 * Providers, told apart by their event header (Gitea first: it also sends
 * X-GitHub-Event for compatibility):
 *
 * | Provider | Event header              | Push events               | Authentication |
 * |----------|---------------------------|---------------------------|----------------|
 * | Gitea    | X-Gitea-Event: push       | push (branches and tags)  | X-Gitea-Signature: <hex> HMAC-SHA256 of the body (X-Hub-Signature-256 accepted too) |
 * | GitLab   | X-Gitlab-Event: Push Hook | Push Hook, Tag Push Hook  | X-Gitlab-Token equals the secret |
 * | GitHub   | X-GitHub-Event: push      | push (branches and tags)  | X-Hub-Signature-256: sha256=<hex> HMAC-SHA256 of the body |
 *
 * The sender is authenticated before anything of the body is read, for every
 * event (a GitHub ping with a wrong secret is refused, so a misconfigured
 * hook shows up when it is created). Comparisons are constant time
 * (timingSafeEqual; the GitLab token is compared through SHA-256 digests so
 * its length does not leak). Bodies may be JSON or, for GitHub and Gitea,
 * application/x-www-form-urlencoded with a `payload` field.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

export const GIT_PROVIDERS = ['github', 'gitlab', 'gitea'] as const;
export type GitProvider = (typeof GIT_PROVIDERS)[number];

/** What a push delivered. `repoUrls` are normalizeRepoUrl keys of every URL the payload names for the repository. */
export interface GitPush {
  readonly provider: GitProvider;
  readonly repoUrls: readonly string[];
  /** The full ref, e.g. refs/heads/main or refs/tags/v1.2.0. */
  readonly ref: string;
  /** The commit the ref points at after the push (all zeros when the ref was deleted). */
  readonly after: string;
  /** The push deleted the ref. */
  readonly deleted: boolean;
}

/** Case-insensitive header lookup; a fetch `Headers` fits. */
export interface HeaderLookup {
  get(name: string): string | null;
}

/** What to do with one delivery. */
export type GitWebhookDelivery =
  | { readonly kind: 'push'; readonly push: GitPush }
  /** GitHub's hook-created ping, authenticated. */
  | { readonly kind: 'ping'; readonly provider: GitProvider }
  /** An authenticated event that is not a push. */
  | { readonly kind: 'ignored'; readonly provider: GitProvider; readonly event: string }
  /** Missing or wrong signature or token; `reason` never contains the secret or the signature. */
  | { readonly kind: 'unauthorized'; readonly provider: GitProvider; readonly reason: string }
  /** No GitHub, GitLab or Gitea event header. */
  | { readonly kind: 'unknown-provider'; readonly reason: string }
  /** Authenticated, but the push payload is not what the provider sends. */
  | { readonly kind: 'invalid'; readonly provider: GitProvider; readonly reason: string };

const NO_COMMIT = /^0+$/;
const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/** Which provider sent the delivery, and its event name. */
export function detectProvider(headers: HeaderLookup): { provider: GitProvider; event: string } | undefined {
  const gitea = headers.get('x-gitea-event');
  if (gitea !== null) return { provider: 'gitea', event: gitea.trim() };
  const gitlab = headers.get('x-gitlab-event');
  if (gitlab !== null) return { provider: 'gitlab', event: gitlab.trim() };
  const github = headers.get('x-github-event');
  if (github !== null) return { provider: 'github', event: github.trim() };
  return undefined;
}

/** Checks the sender of a delivery; undefined when it is authentic, else why not. */
export function verifySignature(
  provider: GitProvider,
  headers: HeaderLookup,
  body: Uint8Array,
  secret: string,
): string | undefined {
  if (secret === '') return 'no webhook secret is configured, so no delivery can be verified';
  switch (provider) {
    case 'github': {
      const header = headers.get('x-hub-signature-256');
      if (header === null)
        return 'the X-Hub-Signature-256 header is missing: set a secret on the GitHub webhook';
      return checkHmac(header, 'sha256=', body, secret, 'X-Hub-Signature-256');
    }
    case 'gitea': {
      const gitea = headers.get('x-gitea-signature');
      if (gitea !== null) return checkHmac(gitea, '', body, secret, 'X-Gitea-Signature');
      const hub = headers.get('x-hub-signature-256');
      if (hub !== null) return checkHmac(hub, 'sha256=', body, secret, 'X-Hub-Signature-256');
      return 'the X-Gitea-Signature header is missing: set a secret on the Gitea webhook';
    }
    case 'gitlab': {
      const token = headers.get('x-gitlab-token');
      if (token === null)
        return 'the X-Gitlab-Token header is missing: set a secret token on the GitLab webhook';
      return constantTimeEqual(token, secret)
        ? undefined
        : 'the X-Gitlab-Token does not match the webhook secret';
    }
  }
}

function checkHmac(
  header: string,
  prefix: string,
  body: Uint8Array,
  secret: string,
  name: string,
): string | undefined {
  const value = header.trim();
  const hex = value.slice(0, prefix.length).toLowerCase() === prefix ? value.slice(prefix.length) : undefined;
  if (hex === undefined || !HEX_SHA256.test(hex)) {
    return `the ${name} header is not ${prefix === '' ? '' : prefix}<64 hex digits> (an HMAC-SHA256 of the body)`;
  }
  const expected = createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(hex, 'hex');
  return timingSafeEqual(expected, given)
    ? undefined
    : `the ${name} does not match the body and the webhook secret`;
}

/** Equality of two strings in time independent of where they differ and of their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

/**
 * Reads one delivery: provider, authentication, event, then the push payload.
 * `body` is the raw body as received (the signature covers its bytes).
 */
export function readGitWebhook(headers: HeaderLookup, body: Uint8Array, secret: string): GitWebhookDelivery {
  const detected = detectProvider(headers);
  if (detected === undefined) {
    return {
      kind: 'unknown-provider',
      reason:
        'no X-GitHub-Event, X-Gitlab-Event or X-Gitea-Event header: configure a push webhook on GitHub, GitLab or Gitea',
    };
  }
  const { provider, event } = detected;
  const refused = verifySignature(provider, headers, body, secret);
  if (refused !== undefined) return { kind: 'unauthorized', provider, reason: refused };

  if (provider === 'github' && event === 'ping') return { kind: 'ping', provider };
  const isPush =
    provider === 'gitlab' ? event === 'Push Hook' || event === 'Tag Push Hook' : event === 'push';
  if (!isPush) return { kind: 'ignored', provider, event };

  const payload = decodePayload(body, headers.get('content-type'));
  if (typeof payload === 'string') return { kind: 'invalid', provider, reason: payload };
  return parsePushPayload(provider, payload);
}

function decodePayload(body: Uint8Array, contentType: string | null): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return 'the body is not UTF-8 text';
  }
  if (/^\s*application\/x-www-form-urlencoded/i.test(contentType ?? '')) {
    const payload = new URLSearchParams(text).get('payload');
    if (payload === null)
      return 'the form body has no payload field; set the webhook content type to application/json';
    text = payload;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return 'the body is not JSON; set the webhook content type to application/json';
  }
}

const urlFields = (names: readonly string[]) =>
  z.looseObject(Object.fromEntries(names.map((n) => [n, z.string().nullish()])));

const GITHUB_REPOSITORY_URLS = ['clone_url', 'html_url', 'ssh_url', 'git_url', 'url'] as const;
const GITEA_REPOSITORY_URLS = ['clone_url', 'html_url', 'ssh_url'] as const;
const GITLAB_PROJECT_URLS = ['git_http_url', 'git_ssh_url', 'web_url', 'http_url', 'ssh_url'] as const;
const GITLAB_REPOSITORY_URLS = ['git_http_url', 'git_ssh_url', 'homepage', 'url'] as const;

const pushPayloadSchema = z.looseObject({
  ref: z.string().min(1).max(1024),
  after: z.string().max(64),
  deleted: z.boolean().optional(),
  repository: z.unknown().optional(),
  project: z.unknown().optional(),
});

function parsePushPayload(provider: GitProvider, payload: unknown): GitWebhookDelivery {
  const parsed = pushPayloadSchema.safeParse(payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.join('.');
    return {
      kind: 'invalid',
      provider,
      reason: `the push payload is not a ${provider} push event: ${field}: ${issue?.message ?? 'invalid'}`,
    };
  }
  const { ref, after } = parsed.data;
  if (!ref.startsWith('refs/'))
    return { kind: 'invalid', provider, reason: 'the push payload ref does not start with refs/' };
  const commit = after.toLowerCase();
  const deleted = parsed.data.deleted === true || NO_COMMIT.test(commit);
  if (!deleted && !COMMIT.test(commit))
    return { kind: 'invalid', provider, reason: 'the push payload after is not a commit id' };

  const urls: (string | null | undefined)[] = [];
  const collect = (object: unknown, names: readonly string[]) => {
    const fields = urlFields(names).safeParse(object);
    if (fields.success) for (const name of names) urls.push(fields.data[name]);
  };
  if (provider === 'github') collect(parsed.data.repository, GITHUB_REPOSITORY_URLS);
  if (provider === 'gitea') collect(parsed.data.repository, GITEA_REPOSITORY_URLS);
  if (provider === 'gitlab') {
    collect(parsed.data.project, GITLAB_PROJECT_URLS);
    collect(parsed.data.repository, GITLAB_REPOSITORY_URLS);
  }
  const repoUrls = [
    ...new Set(
      urls
        .flatMap((url) => (typeof url === 'string' ? [normalizeRepoUrl(url)] : []))
        .filter((u) => u !== undefined),
    ),
  ];
  if (repoUrls.length === 0) {
    return {
      kind: 'invalid',
      provider,
      reason: `the push payload names no repository URL (${provider === 'gitlab' ? 'project.git_http_url' : 'repository.clone_url'})`,
    };
  }
  return { kind: 'push', push: { provider, repoUrls, ref, after: commit, deleted } };
}

const URL_SCHEMES = new Set(['http:', 'https:', 'ssh:', 'git:', 'git+ssh:', 'ssh+git:']);
/** scp-like ssh syntax: [user@]host:path (no scheme). */
const SCP_LIKE = /^(?:[^@/\s]+@)?(\[[^\]\s]+\]|[^:/\s@]+):(?!\/\/)(.*)$/;

/**
 * A repository URL as a comparable key `host[:port]/path`:
 * the scheme is dropped (http, https, ssh, git and scp-like user@host:path
 * name the same repository), credentials are dropped, the host is lowercased,
 * ports are dropped for ssh and git and kept for http(s) unless default,
 * the query and fragment are dropped, and repeated slashes, a trailing "/"
 * and a trailing ".git" are removed. The path keeps its case.
 * Undefined for what is not a remote repository URL (a local path, file://, garbage).
 */
export function normalizeRepoUrl(url: string): string | undefined {
  const text = url.trim();
  if (text === '' || /\s/.test(text)) return undefined;
  let host: string;
  let port = '';
  let path: string;
  const scp = text.includes('://') ? null : SCP_LIKE.exec(text);
  if (scp !== null) {
    host = scp[1] ?? '';
    path = (scp[2] ?? '').replace(/[?#].*$/, '');
  } else {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      return undefined;
    }
    const scheme = parsed.protocol.toLowerCase();
    if (!URL_SCHEMES.has(scheme)) return undefined;
    host = parsed.hostname;
    if (scheme === 'http:' || scheme === 'https:') {
      port = parsed.port === '80' || parsed.port === '443' ? '' : parsed.port;
    }
    path = parsed.pathname;
  }
  host = host.toLowerCase().replace(/\.$/, '');
  if (host === '') return undefined;
  path = path.replace(/\/{2,}/g, '/').replace(/^\//, '');
  for (;;) {
    const trimmed = path.replace(/\/+$/, '').replace(/\.git$/i, '');
    if (trimmed === path) break;
    path = trimmed;
  }
  return `${host}${port === '' ? '' : `:${port}`}${path === '' ? '' : `/${path}`}`;
}

/** Whether two URLs name the same repository (normalizeRepoUrl, path case-insensitive). */
export function sameRepository(a: string, b: string): boolean {
  const na = normalizeRepoUrl(a);
  const nb = normalizeRepoUrl(b);
  return na !== undefined && nb !== undefined && na.toLowerCase() === nb.toLowerCase();
}
