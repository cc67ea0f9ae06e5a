/**
 * The relay's HTTP API (API.md "HTTP API"), as one hono app with no socket:
 * serve.ts puts it on @hono/node-server, tests call `app.request()`.
 *
 *   POST   /v1/namespaces/{ns}/releases/{name}/sync[?force=true]  202 {annotation, value}
 *   PUT    /v1/namespaces/{ns}/releases/{name}/pin  {renderRef}   200 {annotation, value}
 *   DELETE /v1/namespaces/{ns}/releases/{name}/pin                200 {annotation, value: null}
 *   GET    /v1/namespaces/{ns}/releases/{name}                    200 {release, verdict}
 *   GET    /v1/namespaces/{ns}/releases/{name}/renders            200 {renders: [...newest first]}
 *   POST   /v1/hooks/git                                          deps.gitWebhook, else 501
 *   GET    /healthz, /readyz, /metrics                            probes and Prometheus text
 *
 * Every /v1/namespaces route needs `Authorization: Bearer <token>`: the token
 * is checked with a TokenReview (401 when missing or invalid), then a
 * SubjectAccessReview asks for `update` on releases.convoy.dev (sync, pin) or
 * `get` (reads) in that namespace for that name (403 when refused). The
 * webhook authenticates its sender by HMAC; probes and metrics are open
 * (kubelet and Prometheus call them), so they return nothing about Releases.
 *
 * Errors are JSON {error, message} (400 adds `field`):
 *   400 InvalidRequest · 401 Unauthorized · 403 Forbidden · 413 PayloadTooLarge (pin body > 64 KiB) ·
 *   404 NotFound (the Release) / RenderNotFound (the store lacks the render) ·
 *   409 NoStore (no render store configured, so nothing can be pinned or listed) /
 *       Conflict (the API server answered 409) ·
 *   500 Internal · 503 Unavailable (the API server, TokenReview/SubjectAccessReview or the store could not be reached).
 *
 * Decisions: a pin without a render store is 409, not 404 — the request can
 * never succeed on this installation whatever the renderRef, which is a
 * conflict with the server's state, while 404 says "that render does not
 * exist". The sync annotation value is the request time in RFC 3339 with
 * second precision (Kubernetes time precision).
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import { describeZodError, parseRelease } from '../../domain/api/objects.ts';
import { Annotation } from '../../domain/reconcile/annotations.ts';
import { toRfc3339 } from '../../domain/status/conditions.ts';
import { combinedVerdict } from '../../domain/status/verdict.ts';
import {
  compareNewestFirst,
  InvalidRenderKeyError,
  RenderStoreReadError,
  RenderStoreUnavailableError,
  type RenderStore,
} from '../../domain/store/render-store.ts';
import { DASHBOARD_HTML } from './dashboard.ts';
import { AuthCheckError, type Authenticator, type Identity, type ReleaseVerb } from './auth.ts';
import { gitWebhookNotImplemented, type GitWebhookHandler } from './git-hooks.ts';
import { ReleaseApiError, ReleaseNotFoundError, type ReleaseApi } from './release-api.ts';

/** The subset of the project's structured logger the API uses. Never give it a token. */
export interface ApiLogger {
  info(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  warn(msg: string, fields?: Readonly<Record<string, unknown>>): void;
  error(msg: string, fields?: Readonly<Record<string, unknown>>): void;
}

export interface ApiDeps {
  readonly auth: Authenticator;
  readonly releases: ReleaseApi;
  /** Absent when the installation has no render store: pin and renders answer 409 NoStore. */
  readonly store?: RenderStore;
  readonly metrics: { render(): string | Promise<string> };
  /** Whether the relay is ready (informers synced); drives /readyz. */
  ready(): boolean;
  readonly logger?: ApiLogger;
  /** The clock for sync request times; default the system clock. */
  readonly now?: () => Date;
  /** POST /v1/hooks/git; default 501. */
  readonly gitWebhook?: GitWebhookHandler;
}

export type ApiEnv = { Variables: { identity: Identity } };

/** The body of every error response. */
export interface ApiErrorBody {
  error: string;
  message: string;
  field?: string;
}

/** An error that is already an HTTP answer. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: ContentfulStatusCode;
  readonly code: string;
  readonly field: string | undefined;

  constructor(status: ContentfulStatusCode, code: string, message: string, field?: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const pinBodySchema = z.object({
  renderRef: z.string().regex(/^sha256:[0-9a-f]{64}$/, { message: 'must be sha256:<64 lowercase hex digits>, a renderRef from GET …/renders' }),
});

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

function namespaceOf(c: Context<ApiEnv>): string {
  const namespace = c.req.param('ns') ?? '';
  if (namespace.length > 63 || !DNS1123_LABEL.test(namespace)) {
    throw new ApiError(400, 'InvalidRequest', `namespace ${JSON.stringify(namespace.slice(0, 80))} is not a Kubernetes namespace name (lowercase letters, digits and "-", at most 63)`, 'namespace');
  }
  return namespace;
}

function releaseKey(c: Context<ApiEnv>): { namespace: string; name: string } {
  const namespace = namespaceOf(c);
  const name = c.req.param('name') ?? '';
  if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    throw new ApiError(400, 'InvalidRequest', `Release name ${JSON.stringify(name.slice(0, 80))} is not a Kubernetes object name (lowercase letters, digits, "-" and ".", at most 253)`, 'name');
  }
  return { namespace, name };
}

function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer[ \t]+([^ \t]+)[ \t]*$/i.exec(header);
  return match?.[1];
}

function errorBody(err: ApiError): ApiErrorBody {
  return err.field === undefined ? { error: err.code, message: err.message } : { error: err.code, message: err.message, field: err.field };
}

/** Maps any error to the API's answer; unexpected ones are logged and answered without detail. */
function toApiError(err: unknown, logger: ApiLogger | undefined, where: string): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ReleaseNotFoundError) return new ApiError(404, 'NotFound', err.message);
  if (err instanceof InvalidRenderKeyError) return new ApiError(400, 'InvalidRequest', err.message, err.field);
  if (err instanceof ReleaseApiError && err.code === 409) return new ApiError(409, 'Conflict', err.message);
  logger?.error('http api: request failed', { where, error: err });
  if (err instanceof AuthCheckError || err instanceof RenderStoreUnavailableError || (err instanceof ReleaseApiError && (err.code === 0 || err.code >= 500))) {
    return new ApiError(503, 'Unavailable', `${err.message}; retry later`);
  }
  if (err instanceof RenderStoreReadError) return new ApiError(500, 'Internal', `render store: ${err.message}`);
  if (err instanceof ReleaseApiError) return new ApiError(500, 'Internal', err.message);
  return new ApiError(500, 'Internal', 'the relay failed to handle the request; see its log');
}

export function createApiApp(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const now = deps.now ?? (() => new Date());
  const logger = deps.logger;

  app.onError((err, c) => {
    const api = toApiError(err, logger, `${c.req.method} ${c.req.routePath}`);
    return c.json(errorBody(api), api.status);
  });
  app.notFound((c) => c.json({ error: 'NotFound', message: `no route for ${c.req.method} ${c.req.path}; see API.md "HTTP API"` } satisfies ApiErrorBody, 404));

  // Probes and metrics: open, and about the relay only.
  app.get('/healthz', (c) => c.text('ok'));
  app.get('/readyz', (c) =>
    deps.ready()
      ? c.text('ok')
      : c.json({ error: 'NotReady', message: 'the relay has not synced its informers yet' } satisfies ApiErrorBody, 503),
  );
  app.get('/metrics', async (c) => c.body(await deps.metrics.render(), 200, { 'Content-Type': PROMETHEUS_TEXT }));

  // The webhook authenticates its sender (HMAC), not a bearer token.
  app.post('/v1/hooks/git', (c) => (deps.gitWebhook ?? gitWebhookNotImplemented)(c.req.raw));
  // The page itself holds no data; it calls the API below with the user's token.
  app.get('/', (c) => c.redirect('/dashboard'));
  app.get('/dashboard', (c) => c.html(DASHBOARD_HTML));

  // Authentication for every Release route.
  app.use('/v1/namespaces/*', async (c, next) => {
    const token = bearerToken(c.req.header('Authorization'));
    if (token === undefined) {
      c.header('WWW-Authenticate', 'Bearer');
      throw new ApiError(401, 'Unauthorized', 'this call needs an "Authorization: Bearer <token>" header with a Kubernetes token (e.g. kubectl create token)');
    }
    const identity = await deps.auth.authenticate(token);
    if (identity === undefined) {
      c.header('WWW-Authenticate', 'Bearer error="invalid_token"');
      throw new ApiError(401, 'Unauthorized', 'the bearer token is not valid for the management cluster (TokenReview refused it); get a new one');
    }
    c.set('identity', identity);
    await next();
  });

  /** Validates the path and checks the caller may `verb` this Release. */
  const allow = async (c: Context<ApiEnv>, verb: ReleaseVerb) => {
    const key = releaseKey(c);
    const id = c.get('identity');
    const allowed = await deps.auth.authorize(
      id.user,
      id.groups,
      { verb, namespace: key.namespace, resource: 'releases', name: key.name },
      { ...(id.uid !== undefined ? { uid: id.uid } : {}), ...(id.extra !== undefined ? { extra: id.extra } : {}) },
    );
    if (!allowed) {
      throw new ApiError(
        403,
        'Forbidden',
        `user "${id.user}" may not ${verb} releases.convoy.dev "${key.name}" in namespace "${key.namespace}"; ask for a Role that grants "${verb}" on releases.convoy.dev`,
      );
    }
    return { ...key, user: id.user };
  };

  const requireStore = (): RenderStore => {
    if (deps.store === undefined) {
      throw new ApiError(409, 'NoStore', 'no render store is configured for this convoy installation, so renders cannot be listed or pinned');
    }
    return deps.store;
  };

  const base = '/v1/namespaces/:ns/releases/:name';

  app.get('/v1/namespaces/:ns/releases', async (c) => {
    const namespace = namespaceOf(c);
    const id = c.get('identity');
    const allowed = await deps.auth.authorize(
      id.user,
      id.groups,
      { verb: 'list', namespace, resource: 'releases' },
      { ...(id.uid !== undefined ? { uid: id.uid } : {}), ...(id.extra !== undefined ? { extra: id.extra } : {}) },
    );
    if (!allowed) {
      throw new ApiError(403, 'Forbidden', `user "${id.user}" may not list releases.convoy.dev in namespace "${namespace}"; ask for a Role that grants "list" on releases.convoy.dev`);
    }
    const releases = (await deps.releases.list(namespace)).flatMap((raw) => {
      const parsed = parseRelease(raw);
      return parsed.ok ? [{ release: raw, verdict: combinedVerdict(parsed.value) }] : [];
    });
    return c.json({ releases }, 200);
  });

  app.post(`${base}/sync`, async (c) => {
    const key = await allow(c, 'update');
    const forceParam = c.req.query('force');
    if (forceParam !== undefined && forceParam !== 'true' && forceParam !== 'false') {
      throw new ApiError(400, 'InvalidRequest', `query parameter force must be "true" or "false", not ${JSON.stringify(forceParam.slice(0, 40))}`, 'force');
    }
    const annotation = forceParam === 'true' ? Annotation.forceSyncRequestedAt : Annotation.syncRequestedAt;
    const value = toRfc3339(now());
    await deps.releases.annotate(key.namespace, key.name, annotation, value);
    logger?.info('http api: sync requested', { namespace: key.namespace, release: key.name, user: key.user, annotation, value });
    return c.json({ annotation, value }, 202);
  });

  app.put(
    `${base}/pin`,
    bodyLimit({
      maxSize: 64 * 1024,
      onError: (c) => c.json({ error: 'PayloadTooLarge', message: 'the body is larger than 64 KiB; send {"renderRef": "sha256:…"}' } satisfies ApiErrorBody, 413),
    }),
    async (c) => {
      const key = await allow(c, 'update');
      let raw: unknown;
      try {
        raw = JSON.parse(await c.req.text());
      } catch {
        throw new ApiError(400, 'InvalidRequest', 'the body is not JSON; send {"renderRef": "sha256:<64 hex digits>"}');
      }
      const parsed = pinBodySchema.safeParse(raw);
      if (!parsed.success) {
        const field = parsed.error.issues[0]?.path.join('.') || 'renderRef';
        throw new ApiError(400, 'InvalidRequest', describeZodError(parsed.error), field);
      }
      const { renderRef } = parsed.data;
      await deps.releases.get(key.namespace, key.name); // 404 for a missing Release before asking the store
      const store = requireStore();
      if (!(await store.has(key.namespace, key.name, renderRef))) {
        throw new ApiError(
          404,
          'RenderNotFound',
          `render ${renderRef} of Release ${key.namespace}/${key.name} is not in the render store; GET …/renders lists the stored ones`,
        );
      }
      await deps.releases.annotate(key.namespace, key.name, Annotation.pin, renderRef);
      logger?.info('http api: pinned', { namespace: key.namespace, release: key.name, user: key.user, renderRef });
      return c.json({ annotation: Annotation.pin, value: renderRef }, 200);
    },
  );

  app.delete(`${base}/pin`, async (c) => {
    const key = await allow(c, 'update');
    await deps.releases.annotate(key.namespace, key.name, Annotation.pin, null);
    logger?.info('http api: unpinned', { namespace: key.namespace, release: key.name, user: key.user });
    return c.json({ annotation: Annotation.pin, value: null }, 200);
  });

  app.get(base, async (c) => {
    const key = await allow(c, 'get');
    const raw = await deps.releases.get(key.namespace, key.name);
    const parsed = parseRelease(raw);
    if (!parsed.ok) {
      throw new ApiError(500, 'InvalidRelease', `Release ${key.namespace}/${key.name} does not match the convoy API this relay knows: ${parsed.error}`);
    }
    return c.json({ release: raw, verdict: combinedVerdict(parsed.value) }, 200);
  });

  app.get(`${base}/renders`, async (c) => {
    const key = await allow(c, 'get');
    const renders = await requireStore().list(key.namespace, key.name);
    return c.json({ renders: [...renders].sort(compareNewestFirst) }, 200);
  });

  return app;
}
