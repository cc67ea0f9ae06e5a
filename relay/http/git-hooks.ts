/**
 * POST /v1/hooks/git — the Git push webhook (API.md "HTTP API"): GitHub,
 * GitLab and Gitea push events, authenticated by HMAC-SHA256 signature
 * (GitHub, Gitea) or secret token (GitLab), enqueue a reconcile of every
 * Release that follows the pushed ref, and, when the source lists ReleaseSets
 * (the relay has a fleet queue), a fleet message to every set whose
 * children follow it (domain/relay/git-push.ts has the parsing and matching
 * rules). Plugged into createApiApp as `deps.gitWebhook`; without it the route
 * answers 501 (gitWebhookNotImplemented).
 *
 * Answers (errors are the API's JSON {error, message}):
 *   202 {matched: ["ns/name", …]}   a push; the matched Releases were queued (possibly none);
 *       with sets listed also matchedReleaseSets: ["ns/name", …]
 *   200 {pong: true}                GitHub's ping, authenticated
 *   200 {ignored, message}          an authenticated event that is not a push, or a push deleting its ref
 *   400 InvalidRequest              no GitHub/GitLab/Gitea event header, or a push payload that does not parse
 *   401 Unauthorized                missing or wrong signature or token (neither is ever echoed)
 *   413 PayloadTooLarge             body over 1 MiB
 *   503 Unavailable                 no secret configured or readable, Releases not listable, or a send failed
 *
 * Releases, GitRepositories (and ReleaseSets) are listed from the API server on every
 * delivery (all namespaces; the relay already has list RBAC on them), not
 * from the relay's informers: those run on the leader only, and a webhook
 * can reach any replica.
 */
import { z } from 'zod';
import { convoyPath, type ConvoyPlural } from '../../adapters/kube/convoy-paths.ts';
import { createKubeClient } from '../../adapters/kube/http.ts';
import type { KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { gitRepositorySchema, parseRelease, type Release } from '../../domain/api/objects.ts';
import type { ReleaseKey } from '../../domain/relay/coalesce.ts';
import {
  matchReleases,
  matchReleaseSets,
  pushCause,
  readGitWebhook,
  type GitPush,
  type GitRepositoryLike,
  type ReleaseSetLike,
} from '../../domain/relay/git-push.ts';
import { FLEET_LOOP, type QueueLoop } from '../../domain/runtime/queue-message.ts';

/** Handles one webhook delivery; it authenticates the sender itself (HMAC), not with a bearer token. */
export type GitWebhookHandler = (request: Request) => Promise<Response>;

export const gitWebhookNotImplemented: GitWebhookHandler = () =>
  Promise.resolve(
    Response.json(
      {
        error: 'NotImplemented',
        message:
          'POST /v1/hooks/git is not available in this build; use POST /v1/namespaces/{ns}/releases/{name}/sync to trigger a Release',
      },
      { status: 501 },
    ),
  );

/**
 * Where the webhook reads Releases, GitRepositories and ReleaseSets: raw objects as the API server
 * returns them. releaseSets undefined: sets are not matched (no fleet queue).
 */
export interface WebhookReleaseSource {
  list(): Promise<{
    readonly releases: readonly unknown[];
    readonly gitRepositories: readonly unknown[];
    readonly releaseSets?: readonly unknown[] | undefined;
  }>;
}

/** The subset of the structured logger the webhook uses. Never give it the secret or a signature. */
export interface GitWebhookLogger {
  info(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  error(msg: string, fields?: Readonly<Record<string, unknown>>): void;
}

export interface GitWebhookOptions {
  /** The shared webhook secret, or a function reading it (called per delivery, so rotation needs no restart). */
  readonly secret: string | (() => Promise<string>);
  readonly releases: WebhookReleaseSource;
  /** Queues a message for one Release (or with loop fleet one ReleaseSet); the relay's `enqueue` fits. */
  enqueue(loop: QueueLoop, key: ReleaseKey, cause: string): void | Promise<void>;
  readonly logger?: GitWebhookLogger;
  /** Largest body accepted; default 1 MiB. */
  readonly maxBodyBytes?: number;
}

export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

const error = (status: number, code: string, message: string) =>
  Response.json({ error: code, message }, { status });

export function createGitWebhookHandler(options: GitWebhookOptions): GitWebhookHandler {
  return async (request) => {
    const accepted = await acceptDelivery(request, options);
    return accepted instanceof Response ? accepted : await queueMatches(accepted, options);
  };
}

/**
 * The delivery read within the size limit and authenticated with the secret: a push of a ref to
 * act on, or the answer to give (an error, GitHub's ping, an event or a ref deletion ignored).
 */
async function acceptDelivery(request: Request, options: GitWebhookOptions): Promise<GitPush | Response> {
  const { logger } = options;
  const maxBytes = options.maxBodyBytes ?? MAX_WEBHOOK_BODY_BYTES;
  const body = await readLimited(request, maxBytes);
  if (body === undefined) {
    return error(
      413,
      'PayloadTooLarge',
      `the webhook body is larger than ${maxBytes} bytes; convoy reads push events only`,
    );
  }

  let secret: string;
  try {
    secret = typeof options.secret === 'string' ? options.secret : await options.secret();
  } catch (err) {
    logger?.error('git webhook: reading the webhook secret failed', { error: err });
    return error(503, 'Unavailable', 'the relay could not read its Git webhook secret; retry later');
  }
  if (secret === '') {
    logger?.error('git webhook: no webhook secret is configured; every delivery is refused');
    return error(
      503,
      'Unavailable',
      'the relay has no Git webhook secret configured, so it cannot verify deliveries; configure one on the relay',
    );
  }

  const delivery = readGitWebhook(request.headers, body, secret);
  switch (delivery.kind) {
    case 'unknown-provider':
      return error(400, 'InvalidRequest', delivery.reason);
    case 'unauthorized':
      logger?.warn('git webhook: delivery refused', {
        provider: delivery.provider,
        reason: delivery.reason,
      });
      return error(401, 'Unauthorized', `${delivery.reason}; the webhook secret must equal the relay's`);
    case 'invalid':
      logger?.warn('git webhook: push payload does not parse', {
        provider: delivery.provider,
        reason: delivery.reason,
      });
      return error(400, 'InvalidRequest', delivery.reason);
    case 'ping':
      return Response.json({ pong: true }, { status: 200 });
    case 'ignored': {
      const event = delivery.event.slice(0, 80);
      return Response.json(
        {
          ignored: event,
          message: `convoy acts on push events only; ${JSON.stringify(event)} was ignored`,
        },
        { status: 200 },
      );
    }
    case 'push':
      break;
  }

  const { push } = delivery;
  if (push.deleted) {
    logger?.info('git webhook: ref deleted; nothing queued', { provider: push.provider, ref: push.ref });
    return Response.json(
      { ignored: 'push', message: `${push.ref} was deleted; nothing to deliver` },
      { status: 200 },
    );
  }
  return push;
}

/**
 * A push: every Release (and ReleaseSet, when the source lists them) that follows the pushed ref
 * is queued; 202 with their names, or 503 when the listing or a send failed (the sender redelivers).
 */
async function queueMatches(push: GitPush, options: GitWebhookOptions): Promise<Response> {
  const { logger } = options;
  let listed: Awaited<ReturnType<WebhookReleaseSource['list']>>;
  try {
    listed = await options.releases.list();
  } catch (err) {
    logger?.error('git webhook: listing Releases failed', { error: err });
    return error(
      503,
      'Unavailable',
      'the relay could not list Releases from the API server; redeliver the webhook later',
    );
  }
  const releases = parseAll(listed.releases, parseReleaseObject, 'Release', logger);
  const gitRepositories = parseAll(listed.gitRepositories, parseGitRepository, 'GitRepository', logger);

  const matched = matchReleases(push, releases, gitRepositories);
  const sets =
    listed.releaseSets === undefined
      ? undefined
      : matchReleaseSets(
          push,
          parseAll(listed.releaseSets, parseReleaseSetObject, 'ReleaseSet', logger),
          gitRepositories,
        );
  const cause = pushCause(push);
  let failed = 0;
  const queue = async (
    loop: QueueLoop,
    object: { metadata: { namespace?: string | undefined; name: string; uid?: string | undefined } },
  ): Promise<string[]> => {
    const key: ReleaseKey = {
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name,
      uid: object.metadata.uid ?? '',
    };
    try {
      await options.enqueue(loop, key, cause);
      return [`${key.namespace}/${key.name}`];
    } catch (err) {
      failed++;
      logger?.error(`git webhook: queueing a ${loop === FLEET_LOOP ? 'ReleaseSet' : 'Release'} failed`, {
        namespace: key.namespace,
        name: key.name,
        error: err,
      });
      return [];
    }
  };
  const names: string[] = [];
  for (const release of matched) names.push(...(await queue('reconcile', release)));
  const setNames: string[] = [];
  for (const set of sets ?? []) setNames.push(...(await queue(FLEET_LOOP, set)));
  logger?.info('git webhook: push handled', {
    provider: push.provider,
    ref: push.ref,
    after: push.after,
    matched: names.length,
    matchedReleaseSets: setNames.length,
    failed,
  });
  if (failed > 0) {
    const total = matched.length + (sets?.length ?? 0);
    return error(
      503,
      'Unavailable',
      `${failed} of ${total} matching Releases and ReleaseSets could not be queued; redeliver the webhook later`,
    );
  }
  return Response.json(
    sets === undefined ? { matched: names } : { matched: names, matchedReleaseSets: setNames },
    { status: 202 },
  );
}

/** The body, or undefined when it is larger than `max` bytes (by Content-Length or by what arrived). */
async function readLimited(request: Request, max: number): Promise<Uint8Array | undefined> {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared.trim()) > max) return undefined;
  if (request.body === null) return new Uint8Array(0);
  const reader = (request.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function parseReleaseObject(raw: unknown): Parsed<Release> {
  return parseRelease(raw);
}

const releaseSetLikeSchema = z.looseObject({
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional(), uid: z.string().optional() }),
  spec: z.looseObject({
    template: z.looseObject({ spec: z.unknown() }),
    overrides: z.array(z.looseObject({ spec: z.unknown() })).optional(),
  }),
});

function parseReleaseSetObject(raw: unknown): Parsed<ReleaseSetLike> {
  const parsed = releaseSetLikeSchema.safeParse(raw);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: parsed.error.issues[0]?.message ?? 'invalid' };
}

function parseGitRepository(raw: unknown): Parsed<GitRepositoryLike> {
  const parsed = gitRepositorySchema.safeParse(raw);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: parsed.error.issues[0]?.message ?? 'invalid' };
}

/** Parses every object; one that does not parse is logged and skipped (admission should prevent it). */
function parseAll<T>(
  raws: readonly unknown[],
  parse: (raw: unknown) => Parsed<T>,
  kind: string,
  logger: GitWebhookLogger | undefined,
): T[] {
  const out: T[] = [];
  for (const raw of raws) {
    const parsed = parse(raw);
    if (parsed.ok) out.push(parsed.value);
    else {
      const metadata = (raw as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
      logger?.warn(`git webhook: ${kind} does not parse; not matched`, {
        namespace: metadata?.namespace,
        name: metadata?.name,
        error: parsed.error,
      });
    }
  }
  return out;
}

/**
 * Lists Releases and GitRepositories of every namespace from the API server, and ReleaseSets with
 * `releaseSets` (the relay has a fleet queue; it already has list RBAC on them).
 */
export function createKubeWebhookReleaseSource(
  kube: KubeClientConfig,
  options: { readonly releaseSets?: boolean } = {},
): WebhookReleaseSource {
  const client = createKubeClient(kube, { userAgent: 'convoy-relay', timeoutMs: 30_000 });
  const list = async (plural: ConvoyPlural): Promise<unknown[]> =>
    (await client.list<unknown>(convoyPath(plural))).items;
  return {
    async list() {
      const [releases, gitRepositories, releaseSets] = await Promise.all([
        list('releases'),
        list('gitrepositories'),
        options.releaseSets === true ? list('releasesets') : Promise.resolve(undefined),
      ]);
      return { releases, gitRepositories, ...(releaseSets === undefined ? {} : { releaseSets }) };
    },
  };
}
