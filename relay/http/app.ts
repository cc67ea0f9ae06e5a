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
 *   GET    /dashboard, /dashboard/assets/*                        the dashboard (dashboard/routes.ts)
 *   …and the dashboard's routes in release-views.ts (list across namespaces, tree, diff, Events,
 *   rollback, suspend/resume, whoami), and the ReleaseSet routes in release-set-api.ts (list, get,
 *   Events, approve, pause/resume, rollback).
 *
 * Every /v1/namespaces, /v1/releases and /v1/whoami route needs `Authorization: Bearer <token>`: the token
 * is checked with a TokenReview (401 when missing or invalid), then a
 * SubjectAccessReview asks for `update` on releases.convoy.dev (sync, pin) or
 * `get` (reads) in that namespace for that name (403 when refused). Writes are then made with the
 * caller's own token (release-api.ts): the relay's identity may not change a Release. The
 * webhook authenticates its sender by HMAC; probes and metrics are open
 * (kubelet and Prometheus call them), so they name no Release: /metrics counts Releases by
 * condition, and serves the per-Release series only with `metricsPerRelease`.
 *
 * Errors are JSON {error, message} (400 adds `field`):
 *   400 InvalidRequest · 401 Unauthorized · 403 Forbidden · 413 PayloadTooLarge (any body over 64 KiB, the
 *       webhook's over 1 MiB: body-limits.ts, checked before authentication) ·
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
import { Hono, type Context, type Env, type MiddlewareHandler } from 'hono';
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
import { apiBodyLimit } from './body-limits.ts';
import { registerDashboard } from './dashboard/routes.ts';
import { registerReleaseViews } from './release-views.ts';
import { registerReleaseSetRoutes } from './release-set-api.ts';
import type { DiffLimits } from '../../domain/render/text-diff.ts';
import type { UserClusters } from './user-cluster.ts';
import {
  allowRelease,
  ApiError,
  mayOnReleases,
  namespaceOf,
  renderRefSchema,
  type ApiEnv,
  type ApiErrorBody,
} from './api-common.ts';
import { AuthCheckError, type Authenticator, type ReleaseVerb } from './auth.ts';
import { pinRender, requireStore } from './pin-render.ts';
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
  readonly metrics: { render(options?: { perRelease?: boolean }): string | Promise<string> };
  /**
   * Serve the series that name each Release and ReleaseSet on /metrics, which needs no token
   * (CONVOY_METRICS_PER_RELEASE); default false: counts only, no tenant's names.
   */
  readonly metricsPerRelease?: boolean;
  /** Whether the relay is ready (informers synced); drives /readyz. */
  ready(): boolean;
  readonly logger?: ApiLogger;
  /** The clock for sync request times; default the system clock. */
  readonly now?: () => Date;
  /** Connections as the caller (tree, Events); absent: those routes answer 501. */
  readonly userClusters?: UserClusters;
  /** POST /v1/hooks/git; default 501. */
  readonly gitWebhook?: GitWebhookHandler;
  /** The caps of GET …/renders/diff; default render-diff.ts DEFAULT_DIFF_LIMITS. */
  readonly diffLimits?: DiffLimits;
}

export { ApiError, type ApiEnv, type ApiErrorBody } from './api-common.ts';

const pinBodySchema = z.object({ renderRef: renderRefSchema });

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer[ \t]+([^ \t]+)[ \t]*$/i.exec(header);
  return match?.[1];
}

function errorBody(err: ApiError): ApiErrorBody {
  return err.field === undefined
    ? { error: err.code, message: err.message }
    : { error: err.code, message: err.message, field: err.field };
}

/** Maps any error to the API's answer; unexpected ones are logged and answered without detail. */
function toApiError(err: unknown, logger: ApiLogger | undefined, where: string): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ReleaseNotFoundError) return new ApiError(404, 'NotFound', err.message);
  if (err instanceof InvalidRenderKeyError)
    return new ApiError(400, 'InvalidRequest', err.message, err.field);
  if (err instanceof ReleaseApiError && err.code === 409) return new ApiError(409, 'Conflict', err.message);
  // Writes go with the caller's token: the API server itself refused the caller.
  if (err instanceof ReleaseApiError && err.code === 403) return new ApiError(403, 'Forbidden', err.message);
  logger?.error('http api: request failed', { where, error: err });
  if (
    err instanceof AuthCheckError ||
    err instanceof RenderStoreUnavailableError ||
    (err instanceof ReleaseApiError && (err.code === 0 || err.code >= 500))
  ) {
    return new ApiError(503, 'Unavailable', `${err.message}; retry later`);
  }
  if (err instanceof RenderStoreReadError)
    return new ApiError(500, 'Internal', `render store: ${err.message}`);
  if (err instanceof ReleaseApiError) return new ApiError(500, 'Internal', err.message);
  return new ApiError(500, 'Internal', 'the relay failed to handle the request; see its log');
}

/** Probes and metrics: open, so they name no tenant's Release unless the installation opts in (metricsPerRelease). */
function registerProbes<E extends Env>(
  app: Hono<E>,
  deps: Pick<ApiDeps, 'metrics' | 'ready' | 'metricsPerRelease'>,
): void {
  app.get('/healthz', (c) => c.text('ok'));
  app.get('/readyz', (c) =>
    deps.ready()
      ? c.text('ok')
      : c.json(
          { error: 'NotReady', message: 'the relay has not synced its informers yet' } satisfies ApiErrorBody,
          503,
        ),
  );
  const perRelease = deps.metricsPerRelease === true;
  app.get('/metrics', async (c) =>
    c.body(await deps.metrics.render({ perRelease }), 200, { 'Content-Type': PROMETHEUS_TEXT }),
  );
}

/**
 * Only /healthz, /readyz and /metrics: the plain-HTTP port of a relay that serves the API over
 * TLS (kubelet probes and Prometheus stay on HTTP; nothing that carries a token does).
 */
export function createProbeApp(deps: Pick<ApiDeps, 'metrics' | 'ready' | 'metricsPerRelease'>): Hono {
  const app = new Hono();
  app.use('*', apiBodyLimit());
  registerProbes(app, deps);
  app.notFound((c) =>
    c.json(
      {
        error: 'NotFound',
        message: `${c.req.path} is served on the relay's HTTPS port only`,
      } satisfies ApiErrorBody,
      404,
    ),
  );
  return app;
}

export function createApiApp(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const now = deps.now ?? (() => new Date());
  const logger = deps.logger;

  app.onError((err, c) => {
    const api = toApiError(err, logger, `${c.req.method} ${c.req.routePath}`);
    return c.json(errorBody(api), api.status);
  });
  app.notFound((c) =>
    c.json(
      {
        error: 'NotFound',
        message: `no route for ${c.req.method} ${c.req.path}; see API.md "HTTP API"`,
      } satisfies ApiErrorBody,
      404,
    ),
  );

  // Before any route and before authentication: no route reads a body larger than this (body-limits.ts).
  app.use('*', apiBodyLimit(logger));
  registerProbes(app, deps);

  // The webhook authenticates its sender (HMAC), not a bearer token.
  app.post('/v1/hooks/git', (c) => (deps.gitWebhook ?? gitWebhookNotImplemented)(c.req.raw));
  // The page itself holds no data; it calls the API below with the user's token.
  registerDashboard(app);

  // Authentication for every Release route.
  const authenticate: MiddlewareHandler<ApiEnv> = async (c, next) => {
    const token = bearerToken(c.req.header('Authorization'));
    if (token === undefined) {
      c.header('WWW-Authenticate', 'Bearer');
      throw new ApiError(
        401,
        'Unauthorized',
        'this call needs an "Authorization: Bearer <token>" header with a Kubernetes token (e.g. kubectl create token)',
      );
    }
    const identity = await deps.auth.authenticate(token);
    if (identity === undefined) {
      c.header('WWW-Authenticate', 'Bearer error="invalid_token"');
      throw new ApiError(
        401,
        'Unauthorized',
        'the bearer token is not valid for the management cluster (TokenReview refused it); get a new one',
      );
    }
    c.set('identity', identity);
    c.set('token', token);
    await next();
  };
  for (const path of ['/v1/namespaces/*', '/v1/releases', '/v1/releasesets', '/v1/whoami'])
    app.use(path, authenticate);
  const summaries = registerReleaseViews(app, deps);
  registerReleaseSetRoutes(app, {
    auth: deps.auth,
    userClusters: deps.userClusters,
    releaseNamespaces: async () => [...new Set((await summaries()).map((s) => s.namespace))],
    logger,
  });

  const allow = (c: Context<ApiEnv>, verb: ReleaseVerb) => allowRelease(deps.auth, c, verb);

  const base = '/v1/namespaces/:ns/releases/:name';

  app.get('/v1/namespaces/:ns/releases', async (c) => {
    const namespace = namespaceOf(c);
    const id = c.get('identity');
    const allowed = await mayOnReleases(deps.auth, id, 'list', namespace);
    if (!allowed) {
      throw new ApiError(
        403,
        'Forbidden',
        `user "${id.user}" may not list releases.convoy.dev in namespace "${namespace}"; ask for a Role that grants "list" on releases.convoy.dev`,
      );
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
      throw new ApiError(
        400,
        'InvalidRequest',
        `query parameter force must be "true" or "false", not ${JSON.stringify(forceParam.slice(0, 40))}`,
        'force',
      );
    }
    const annotation = forceParam === 'true' ? Annotation.forceSyncRequestedAt : Annotation.syncRequestedAt;
    const value = toRfc3339(now());
    await deps.releases.writesAs(c.get('token')).annotate(key.namespace, key.name, annotation, value);
    logger?.info('http api: sync requested', {
      namespace: key.namespace,
      release: key.name,
      user: key.user,
      annotation,
      value,
    });
    return c.json({ annotation, value }, 202);
  });

  app.put(`${base}/pin`, async (c) => {
    const key = await allow(c, 'update');
    let raw: unknown;
    try {
      raw = JSON.parse(await c.req.text());
    } catch {
      throw new ApiError(
        400,
        'InvalidRequest',
        'the body is not JSON; send {"renderRef": "sha256:<64 hex digits>"}',
      );
    }
    const parsed = pinBodySchema.safeParse(raw);
    if (!parsed.success) {
      const field = parsed.error.issues[0]?.path.join('.') || 'renderRef';
      throw new ApiError(400, 'InvalidRequest', describeZodError(parsed.error), field);
    }
    const { renderRef } = parsed.data;
    await pinRender(deps.releases, deps.store, key, renderRef, c.get('token'));
    logger?.info('http api: pinned', {
      namespace: key.namespace,
      release: key.name,
      user: key.user,
      renderRef,
    });
    return c.json({ annotation: Annotation.pin, value: renderRef }, 200);
  });

  app.delete(`${base}/pin`, async (c) => {
    const key = await allow(c, 'update');
    await deps.releases.writesAs(c.get('token')).annotate(key.namespace, key.name, Annotation.pin, null);
    logger?.info('http api: unpinned', { namespace: key.namespace, release: key.name, user: key.user });
    return c.json({ annotation: Annotation.pin, value: null }, 200);
  });

  app.get(base, async (c) => {
    const key = await allow(c, 'get');
    const raw = await deps.releases.get(key.namespace, key.name);
    const parsed = parseRelease(raw);
    if (!parsed.ok) {
      throw new ApiError(
        500,
        'InvalidRelease',
        `Release ${key.namespace}/${key.name} does not match the convoy API this relay knows: ${parsed.error}`,
      );
    }
    return c.json({ release: raw, verdict: combinedVerdict(parsed.value) }, 200);
  });

  app.get(`${base}/renders`, async (c) => {
    const key = await allow(c, 'get');
    const renders = await requireStore(deps.store).list(key.namespace, key.name);
    return c.json({ renders: [...renders].sort(compareNewestFirst) }, 200);
  });

  return app;
}
