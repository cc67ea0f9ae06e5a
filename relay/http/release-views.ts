/**
 * The routes behind the dashboard's Release page (docs/api.md "Dashboard routes"):
 *
 *   GET  /v1/whoami                                              200 {user, groups}
 *   GET  /v1/releases[?namespace=]                               200 {scope, namespaces, items} (ETag; 304)
 *   GET  /v1/namespaces/{ns}/releases/{name}/tree                200 {renderRef, objects: [{kind, namespace, name, sync, health, message}]}
 *   GET  /v1/namespaces/{ns}/releases/{name}/renders/diff?from=&to=  200 {from, to, objects: [{kind, namespace, name, change, lines, skipped?}], unchanged}
 *        (an object over a cap of render-diff.ts has `skipped` naming the cap, e.g. "diff skipped: object over 1 MiB (cap per object)")
 *   GET  /v1/namespaces/{ns}/releases/{name}/events              200 {events: [...oldest first]}
 *   POST /v1/namespaces/{ns}/releases/{name}/rollback  [{to} | {lastHealthy: true}]  200 {annotation, value, why}
 *        (default: the previous render, domain/status/rollback-target.ts, as `convoy rollback`)
 *   POST /v1/namespaces/{ns}/releases/{name}/suspend | resume    200 {suspend}
 *
 * The tree and Events read the cluster with the caller's own token
 * (user-cluster.ts), through the same code as `convoy tree` / `convoy events`;
 * the rest follow the API's pattern: a SubjectAccessReview for the caller,
 * then the relay acts. Secret values never leave: the diff shows per-process
 * fingerprints (views/live-compare.ts comparable()).
 */
import { createHash } from 'node:crypto';
import type { Hono } from 'hono';
import { isKubeApiError, KubeTransportError } from '../../adapters/kube/http.ts';
import { parseRelease, type Release } from '../../domain/api/objects.ts';
import { Annotation } from '../../domain/reconcile/annotations.ts';
import { rollbackTarget, type RollbackRequest } from '../../domain/status/rollback-target.ts';
import type { KubeObject } from '../../domain/render/kube-object.ts';
import type { RenderStore } from '../../domain/store/render-store.ts';
import { releaseEvents } from '../../views/events.ts';
import { ViewFailure } from '../../views/failure.ts';
import { compareWithLive, targetConfig } from '../../views/live-compare.ts';
import { objectStates } from '../../views/object-states.ts';
import { allowRelease, ApiError, checkNamespace, renderRefSchema, type ApiEnv } from './api-common.ts';
import type { Authenticator } from './auth.ts';
import { pinRender, requireStore } from './pin-render.ts';
import { DEFAULT_DIFF_LIMITS, type DiffLimits } from '../../domain/render/text-diff.ts';
import { byObjectKey, diffRenders } from './render-diff.ts';
import type { ReleaseApi } from './release-api.ts';
import { createSummaryCache, visibleReleases, type ReleaseSummary } from './release-list.ts';
import { asUser, type UserClusters } from './user-cluster.ts';

export interface ViewDeps {
  readonly auth: Authenticator;
  readonly releases: ReleaseApi;
  readonly store?: RenderStore | undefined;
  /** Absent: the tree and Events answer 501 (no way to act with the caller's token). */
  readonly userClusters?: UserClusters | undefined;
  readonly logger?: { info(msg: string, fields?: Readonly<Record<string, unknown>>): void } | undefined;
  /** The caps of GET …/renders/diff (render-diff.ts); default DEFAULT_DIFF_LIMITS. */
  readonly diffLimits?: DiffLimits | undefined;
}

const base = '/v1/namespaces/:ns/releases/:name';

async function readParsed(releases: ReleaseApi, key: { namespace: string; name: string }): Promise<Release> {
  const parsed = parseRelease(await releases.get(key.namespace, key.name));
  if (!parsed.ok)
    throw new ApiError(
      500,
      'InvalidRelease',
      `Release ${key.namespace}/${key.name} does not match the convoy API this relay knows: ${parsed.error}`,
    );
  return parsed.value;
}

/** A Kubernetes answer to the caller's own request, as the API's answer. */
function asCaller(error: unknown, user: string, what: string): unknown {
  if (isKubeApiError(error, 403))
    return new ApiError(
      403,
      'Forbidden',
      `user "${user}" may not ${what} (the API server refused it with the caller's token)`,
    );
  if (isKubeApiError(error, 401))
    return new ApiError(401, 'Unauthorized', 'the bearer token is not valid any more; sign in again');
  if (error instanceof ViewFailure) return new ApiError(409, 'TargetNotReady', error.message);
  if (error instanceof KubeTransportError)
    return new ApiError(503, 'Unavailable', `the cluster could not be reached: ${error.reason}; retry later`);
  return error;
}

/** Registers the routes; returns the shared list of Release summaries (the ReleaseSet list reads its namespaces). */
export function registerReleaseViews(app: Hono<ApiEnv>, deps: ViewDeps): () => Promise<ReleaseSummary[]> {
  const summaries = createSummaryCache(deps.releases);

  app.get('/v1/whoami', (c) => {
    const id = c.get('identity');
    return c.json({ user: id.user, groups: id.groups }, 200);
  });

  app.get('/v1/releases', async (c) => {
    const ns = c.req.query('namespace');
    const listing = await visibleReleases(
      deps.auth,
      summaries,
      c.get('identity'),
      ns === undefined || ns === '' ? undefined : checkNamespace(ns),
    );
    const body = JSON.stringify(listing);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    c.header('ETag', etag);
    c.header('Cache-Control', 'no-cache, private');
    if (c.req.header('If-None-Match') === etag) return c.body(null, 304);
    return c.body(body, 200, { 'Content-Type': 'application/json' });
  });

  app.get(`${base}/tree`, async (c) => {
    const key = await allowRelease(deps.auth, c, 'get');
    const release = await readParsed(deps.releases, key);
    const renderRef = release.status?.lastSuccessful?.renderRef;
    if (renderRef === undefined)
      return c.json({ renderRef: null, objects: [], message: 'no render is applied yet' }, 200);
    const stored = await requireStore(deps.store).get(key.namespace, key.name, renderRef);
    if (stored === undefined)
      throw new ApiError(
        404,
        'RenderNotFound',
        `the applied render ${renderRef} is not in the render store any more`,
      );
    const objects = await asUser(deps, c, async (cluster) => {
      try {
        const target = await targetConfig(cluster, release);
        try {
          return objectStates(await compareWithLive(target, stored.objects as KubeObject[]), release);
        } finally {
          if (target !== cluster.config) target.agent.destroy();
        }
      } catch (error) {
        throw asCaller(
          error,
          key.user,
          `read and dry-run the objects of Release ${key.namespace}/${key.name}`,
        );
      }
    });
    return c.json({ renderRef, objects }, 200);
  });

  app.get(`${base}/renders/diff`, async (c) => {
    const key = await allowRelease(deps.auth, c, 'get');
    const refs = (['from', 'to'] as const).map((field) => {
      const parsed = renderRefSchema.safeParse(c.req.query(field) ?? '');
      if (!parsed.success)
        throw new ApiError(
          400,
          'InvalidRequest',
          `query parameter ${field} ${parsed.error.issues[0]?.message ?? 'is invalid'}`,
          field,
        );
      return parsed.data;
    });
    const store = requireStore(deps.store);
    const [from, to] = await Promise.all(
      refs.map(async (ref) => {
        const render = await store.get(key.namespace, key.name, ref);
        if (render === undefined)
          throw new ApiError(
            404,
            'RenderNotFound',
            `render ${ref} of Release ${key.namespace}/${key.name} is not in the render store`,
          );
        return byObjectKey(render.objects as KubeObject[]);
      }),
    );
    const { objects, unchanged } = diffRenders(from, to, deps.diffLimits ?? DEFAULT_DIFF_LIMITS);
    return c.json({ from: refs[0], to: refs[1], objects, unchanged }, 200);
  });

  app.get(`${base}/events`, async (c) => {
    const key = await allowRelease(deps.auth, c, 'get');
    await deps.releases.get(key.namespace, key.name); // 404 for a deleted Release, not an empty list
    const events = await asUser(deps, c, async (cluster) => {
      try {
        return await releaseEvents(cluster, key);
      } catch (error) {
        throw asCaller(error, key.user, `list events.events.k8s.io in namespace "${key.namespace}"`);
      }
    });
    return c.json({ events }, 200);
  });

  app.post(`${base}/rollback`, async (c) => {
    const key = await allowRelease(deps.auth, c, 'update');
    const request = rollbackRequest(await c.req.text());
    const name = `${key.namespace}/${key.name}`;
    const target = rollbackTarget(await readParsed(deps.releases, key), request, name);
    if (!target.ok) {
      if (target.reason === 'ConflictingOptions')
        throw new ApiError(400, 'InvalidRequest', target.message, 'lastHealthy');
      const hint =
        target.reason === 'NoRender'
          ? ''
          : '; name one: {"to": "sha256:…"} (GET …/renders lists the stored ones)';
      throw new ApiError(409, target.reason, `${target.message}${hint}`, 'to');
    }
    await pinRender(deps.releases, deps.store, key, target.ref, c.get('token'));
    deps.logger?.info('http api: rolled back', {
      namespace: key.namespace,
      release: key.name,
      user: key.user,
      renderRef: target.ref,
      why: target.why,
    });
    return c.json({ annotation: Annotation.pin, value: target.ref, why: target.why }, 200);
  });

  for (const [verb, suspend] of [
    ['suspend', true],
    ['resume', false],
  ] as const) {
    app.post(`${base}/${verb}`, async (c) => {
      const key = await allowRelease(deps.auth, c, 'update');
      await deps.releases.writesAs(c.get('token')).setSuspend(key.namespace, key.name, suspend);
      deps.logger?.info(`http api: ${verb}ed`, {
        namespace: key.namespace,
        release: key.name,
        user: key.user,
      });
      return c.json({ suspend }, 200);
    });
  }
  return summaries;
}

/**
 * The body of POST …/rollback: `{}` or empty (the previous render), `{"to": ref}`, `{"lastHealthy": true}`.
 * `renderRef` is the former name of `to` and still accepted; both with different values are refused.
 */
function rollbackRequest(text: string): RollbackRequest {
  if (text.trim() === '') return {};
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ApiError(
      400,
      'InvalidRequest',
      'the body is not JSON; send {}, {"to": "sha256:<64 hex digits>"} or {"lastHealthy": true}',
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ApiError(
      400,
      'InvalidRequest',
      'the body is not a JSON object; send {}, {"to": "sha256:<64 hex digits>"} or {"lastHealthy": true}',
    );
  const body = raw as { to?: unknown; renderRef?: unknown; lastHealthy?: unknown };
  const ref = (field: 'to' | 'renderRef'): string | undefined => {
    if (body[field] === undefined) return undefined;
    const parsed = renderRefSchema.safeParse(body[field]);
    if (!parsed.success)
      throw new ApiError(
        400,
        'InvalidRequest',
        `${field} ${parsed.error.issues[0]?.message ?? 'is invalid'}`,
        field,
      );
    return parsed.data;
  };
  const to = ref('to');
  const renderRef = ref('renderRef');
  if (to !== undefined && renderRef !== undefined && to !== renderRef)
    throw new ApiError(
      400,
      'InvalidRequest',
      'to and renderRef (its former name) name two renders; give one',
      'to',
    );
  if (body.lastHealthy !== undefined && typeof body.lastHealthy !== 'boolean')
    throw new ApiError(400, 'InvalidRequest', 'lastHealthy must be true or false', 'lastHealthy');
  return { to: to ?? renderRef, lastHealthy: body.lastHealthy === true };
}
