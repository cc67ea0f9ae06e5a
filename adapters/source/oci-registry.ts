/**
 * A client of one repository of an OCI registry (the distribution API: Docker Hub, GHCR, ECR,
 * Harbor, GitLab, distribution's `registry`), for reading: the tag list (paged through the `Link`
 * header), manifests (HEAD for a tag's digest, GET by digest, checked against it) and blobs (size
 * limit before and during download, digest checked).
 *
 * Authentication follows the registry's `WWW-Authenticate` challenge:
 * - anonymous first; a `Basic` challenge is answered with the credentials, when there are some;
 * - a `Bearer realm=…,service=…` challenge: a token for `repository:<name>:pull` is fetched from the
 *   realm (with the credentials as basic auth when there are some, anonymously otherwise) and sent
 *   as `Authorization: Bearer`. The token lives in this client only (one resolve), never in a file.
 * Credentials stay with their host: the basic credentials go to the registry's origin and to the
 * token realm its challenge named, the bearer token to the registry's origin only. A redirect to
 * another origin (a blob on S3 or a CDN) is followed without them (the egress client drops them);
 * a tag list whose `Link: rel="next"` names another origin is refused — the next page of a
 * registry's tag list is on the registry, and a page from elsewhere would let another host choose
 * the version deployed.
 *
 * Every request goes through the egress client (adapters/egress/client.ts): the installation's
 * egress policy for the registry, the realm and every redirect; redirects to the same scheme or
 * HTTPS only, and to plain HTTP only on a host `plainHttpAllowed` accepts (CONVOY_INSECURE_REGISTRIES).
 *
 * Every request has its own timeout. Failures are SourceNotReadyError naming the registry, the
 * repository and the HTTP status (401/403: the credentials; 429/5xx: retried) or the class of
 * failure (egress refusal, connection refused, TLS failure, timed out) — never a credential, the
 * server's own text or the TLS library's. A 429 or 5xx answer is first retried here, `retries`
 * times with exponential backoff (a `Retry-After` of a few seconds is honoured); then the Release's
 * own backoff takes over.
 *
 * TLS: the public trust store, or — with `caPem` (spec `certSecretRef`, key ca.crt) — that bundle
 * for this registry's origin only, never the process's trust store.
 */
import { createHash } from 'node:crypto';
import { STRICT_EGRESS } from '../../domain/egress/policy.ts';
import { nextLink, parseWwwAuthenticate, type RegistryCredentials } from '../../domain/source/oci.ts';
import { createEgress } from '../egress/client.ts';
import { SourceNotReadyError } from './errors.ts';
import { readLimited, refusedAnswer, unanswered, type Answers } from './oci-answers.ts';
import type { OciClientOptions } from './oci-client-options.ts';

export type { OciClientOptions } from './oci-client-options.ts';

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';
export const DOCKER_MANIFEST_LIST = 'application/vnd.docker.distribution.manifest.list.v2+json';
const MANIFEST_ACCEPT = [OCI_MANIFEST, DOCKER_MANIFEST, OCI_INDEX, DOCKER_MANIFEST_LIST].join(', ');

/** The longest Retry-After honoured inside one resolve; longer waits are left to the Release's backoff. */
const MAX_RETRY_AFTER_MS = 5_000;

/** Whether an answer is retried with backoff: rate limited or a server error. */
export function retriedStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

export interface OciManifest {
  mediaType?: string;
  config?: { mediaType?: string; digest?: string; size?: number };
  layers?: { mediaType?: string; digest?: string; size?: number; annotations?: Record<string, string> }[];
  annotations?: Record<string, string>;
}

export interface OciClient {
  /** `host[:port]/repository`, for messages. */
  readonly location: string;
  tags(): Promise<string[]>;
  /** The digest a tag (or digest) names now: one HEAD. undefined when the registry does not know it. */
  resolveDigest(reference: string): Promise<string | undefined>;
  /** The manifest a digest names, checked against that digest. */
  manifest(digest: string): Promise<{ manifest: OciManifest; mediaType: string }>;
  blob(digest: string, limit: number, what: string): Promise<Buffer>;
}

export function createOciClient(options: OciClientOptions): OciClient {
  const base = `${options.plainHttp ? 'http' : 'https'}://${options.registry}`;
  const location = `${options.registry}/${options.repository}`;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const field = options.field;
  const answers: Answers = { options, location, timeoutMs };
  // Per client (one resolve): how to authorize the next request, learned from the first challenge.
  let authorization: string | undefined;

  const basic = (c: RegistryCredentials) =>
    `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;

  const egress = options.egress ?? createEgress(STRICT_EGRESS);
  const plainHttpAllowed =
    options.plainHttpAllowed ?? ((host: string) => options.plainHttp === true && host === options.registry);

  async function send(
    url: string,
    init: { method: string; accept?: string; authorization?: string | undefined },
  ): Promise<Response> {
    const headers: Record<string, string> = {};
    if (init.accept) headers['accept'] = init.accept;
    if (init.authorization) headers['authorization'] = init.authorization;
    const retries = options.retries ?? 2;
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await egress.fetch(url, {
          method: init.method,
          headers,
          signal: AbortSignal.timeout(timeoutMs),
          ca: options.caPem,
          plainHttp: plainHttpAllowed,
        });
      } catch (err) {
        throw unanswered(answers, err, init.method, url);
      }
      options.onRequest?.(init.method, new URL(url).pathname, response.status);
      if (!retriedStatus(response.status) || attempt >= retries) return response;
      await response.body?.cancel();
      const retryAfter = Number(response.headers.get('retry-after') ?? '');
      const backoff = (options.retryDelayMs ?? 500) * 2 ** attempt;
      const wait =
        Number.isFinite(retryAfter) && retryAfter > 0
          ? Math.min(retryAfter * 1000, MAX_RETRY_AFTER_MS)
          : backoff;
      await new Promise((ok) => setTimeout(ok, wait));
    }
  }

  /** Fetches a bearer token for pulling this repository from the challenge's realm. */
  async function token(params: Record<string, string>, what: string): Promise<string> {
    const realm = params['realm'];
    let url: URL;
    try {
      url = new URL(realm ?? '');
    } catch {
      throw new SourceNotReadyError(
        `${field}.repository`,
        `registry ${options.registry} asked for a bearer token without a usable realm; cannot authenticate ${what}`,
      );
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && plainHttpAllowed(url.host))) {
      throw new SourceNotReadyError(
        `${field}.repository`,
        url.protocol === 'http:'
          ? `registry ${options.registry} names a token realm over plain HTTP on a host the installation does not list in CONVOY_INSECURE_REGISTRIES; convoy does not send credentials there`
          : `registry ${options.registry} names a token realm over ${url.protocol.replace(/:$/, '')}, which convoy does not send credentials to`,
      );
    }
    if (params['service']) url.searchParams.set('service', params['service']);
    url.searchParams.set('scope', params['scope'] ?? `repository:${options.repository}:pull`);
    const response = await send(url.toString(), {
      method: 'GET',
      authorization: options.credentials ? basic(options.credentials) : undefined,
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw refusedAnswer(answers, response.status, `a token for ${what}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (err) {
      throw new SourceNotReadyError(
        `${field}.repository`,
        `the token service of registry ${options.registry} answered something that is not JSON`,
        { cause: err },
      );
    }
    const value =
      typeof body === 'object' && body !== null
        ? ((body as { token?: unknown }).token ?? (body as { access_token?: unknown }).access_token)
        : undefined;
    if (typeof value !== 'string' || value === '') {
      throw new SourceNotReadyError(
        `${field}.repository`,
        `the token service of registry ${options.registry} answered without a token`,
      );
    }
    return value;
  }

  /** A request with the auth dance: anonymous (or what the last challenge taught), then once more after a challenge. */
  async function request(url: string, method: string, what: string, accept?: string): Promise<Response> {
    const first = await send(url, { method, accept, authorization });
    if (first.status !== 401) return first;
    await first.body?.cancel();
    const challenges = parseWwwAuthenticate(first.headers.get('www-authenticate') ?? '');
    const bearer = challenges.find((c) => c.scheme === 'bearer');
    const basicChallenge = challenges.find((c) => c.scheme === 'basic');
    let next: string | undefined;
    if (bearer !== undefined) next = `Bearer ${await token(bearer.params, what)}`;
    else if (basicChallenge !== undefined && options.credentials) next = basic(options.credentials);
    if (next === undefined || next === authorization) throw refusedAnswer(answers, 401, what);
    authorization = next;
    const second = await send(url, { method, accept, authorization });
    if (second.status === 401) {
      await second.body?.cancel();
      throw refusedAnswer(answers, 401, what);
    }
    return second;
  }

  const sha256 = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

  return {
    location,
    async tags() {
      const tags: string[] = [];
      let url: string | undefined = `${base}/v2/${options.repository}/tags/list?n=1000`;
      for (let page = 0; url !== undefined; page++) {
        if (page >= 100) {
          throw new SourceNotReadyError(
            `${field}.repository`,
            `${location} lists more than 100 pages of tags; pin ${field}.version to an exact version or use ${field}.digest`,
          );
        }
        const response = await request(url, 'GET', 'the tag list');
        if (response.status === 404) {
          await response.body?.cancel();
          throw new SourceNotReadyError(
            `${field}.chart`,
            `registry ${options.registry} has no repository ${options.repository} (HTTP 404 on its tag list); push the chart or fix ${field}.repository and ${field}.chart (will retry)`,
          );
        }
        if (!response.ok) {
          await response.body?.cancel();
          throw refusedAnswer(answers, response.status, 'the tag list');
        }
        const body = await readLimited(answers, response, 16 * 1024 * 1024, 'the tag list');
        let parsed: unknown;
        try {
          parsed = JSON.parse(body.toString('utf8'));
        } catch (err) {
          throw new SourceNotReadyError(`${field}.repository`, `the tag list of ${location} is not JSON`, {
            cause: err,
          });
        }
        const list =
          typeof parsed === 'object' && parsed !== null ? (parsed as { tags?: unknown }).tags : undefined;
        if (Array.isArray(list)) for (const t of list) if (typeof t === 'string') tags.push(t);
        url = nextLink(response.headers.get('link'), url);
        if (url !== undefined && new URL(url).origin !== new URL(base).origin) {
          // Refused, not followed without credentials: the tag list is the registry's, and a page
          // from another host would let that host choose the version deployed.
          throw new SourceNotReadyError(
            `${field}.repository`,
            `registry ${options.registry} names the next page of the tag list of ${location} on another host or scheme; convoy reads tag lists from the registry itself only (nothing was sent there). Pin ${field}.version to an exact version or use ${field}.digest (will retry)`,
          );
        }
      }
      return tags;
    },
    async resolveDigest(reference) {
      const response = await request(
        `${base}/v2/${options.repository}/manifests/${reference}`,
        'HEAD',
        `the manifest ${reference}`,
        MANIFEST_ACCEPT,
      );
      await response.body?.cancel();
      if (response.status === 404) return undefined;
      if (!response.ok) throw refusedAnswer(answers, response.status, `the manifest ${reference}`);
      const digest = response.headers.get('docker-content-digest') ?? undefined;
      if (digest !== undefined && /^sha256:[0-9a-f]{64}$/.test(digest)) return digest;
      // No usable digest header: read the manifest and hash it.
      const full = await request(
        `${base}/v2/${options.repository}/manifests/${reference}`,
        'GET',
        `the manifest ${reference}`,
        MANIFEST_ACCEPT,
      );
      if (!full.ok) {
        await full.body?.cancel();
        throw refusedAnswer(answers, full.status, `the manifest ${reference}`);
      }
      return sha256(await readLimited(answers, full, 4 * 1024 * 1024, `the manifest ${reference}`));
    },
    async manifest(digest) {
      const response = await request(
        `${base}/v2/${options.repository}/manifests/${digest}`,
        'GET',
        `the manifest ${digest}`,
        MANIFEST_ACCEPT,
      );
      if (response.status === 404) {
        await response.body?.cancel();
        throw new SourceNotReadyError(
          `${field}.digest`,
          `${location} has no manifest ${digest} (HTTP 404); push it or fix the digest (will retry)`,
        );
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw refusedAnswer(answers, response.status, `the manifest ${digest}`);
      }
      const bytes = await readLimited(answers, response, 4 * 1024 * 1024, `the manifest ${digest}`);
      const actual = sha256(bytes);
      if (actual !== digest) {
        throw new SourceNotReadyError(
          `${field}.repository`,
          `registry ${options.registry} served a manifest for ${location}@${digest} whose digest is ${actual}; refusing it (will retry)`,
        );
      }
      let manifest: OciManifest;
      try {
        manifest = JSON.parse(bytes.toString('utf8')) as OciManifest;
      } catch (err) {
        throw new SourceNotReadyError(
          `${field}.repository`,
          `the manifest ${location}@${digest} is not JSON`,
          { cause: err },
        );
      }
      const mediaType =
        manifest.mediaType ?? (response.headers.get('content-type') ?? '').split(';')[0].trim();
      return { manifest, mediaType };
    },
    async blob(digest, limit, what) {
      const response = await request(`${base}/v2/${options.repository}/blobs/${digest}`, 'GET', what);
      if (!response.ok) {
        await response.body?.cancel();
        throw refusedAnswer(answers, response.status, what);
      }
      const bytes = await readLimited(answers, response, limit, what);
      const actual = sha256(bytes);
      if (actual !== digest) {
        throw new SourceNotReadyError(
          `${field}.repository`,
          `${what} of ${location} has digest ${actual}, not ${digest} as its manifest says; refusing it (will retry)`,
        );
      }
      return bytes;
    },
  };
}
