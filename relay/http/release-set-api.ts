/**
 * The HTTP API of ReleaseSets (docs/api.md "HTTP API: ReleaseSets"), with the rules of
 * the Release routes: a SubjectAccessReview for the caller on releasesets.convoy.dev (`get`,
 * `list`, `update`; 403 naming what to ask for), then the request is made with the CALLER's own
 * token (user-cluster.ts), never the relay's — a tenant sees and changes exactly what its RBAC
 * allows, and the relay needs no right on ReleaseSets at all.
 *
 *   GET  /v1/releasesets[?namespace=]                          200 {scope, namespaces, items: [summary]}
 *   GET  /v1/namespaces/{ns}/releasesets                       200 {items: [summary]}
 *   GET  /v1/namespaces/{ns}/releasesets/{name}                200 {releaseSet, verdict, children: [child] | null, childrenMessage?}
 *   GET  /v1/namespaces/{ns}/releasesets/{name}/events         200 {events: [...oldest first]}
 *   POST /v1/namespaces/{ns}/releasesets/{name}/approve  [{step}]  200 {annotation, value}   409 NothingToApprove
 *   POST /v1/namespaces/{ns}/releasesets/{name}/pause | resume     200 {paused}
 *   POST /v1/namespaces/{ns}/releasesets/{name}/rollback           200 {annotation, value, to}  409 NothingToRollBack
 *
 * The reads are here; the writes (approve, pause, resume, rollback) are release-set-actions.ts, and
 * what both share (acting as the caller) is release-set-caller.ts.
 */
import type { Context, Hono } from 'hono';
import { releasePath, releaseSetPath } from '../../adapters/kube/convoy-paths.ts';
import { isKubeApiError } from '../../adapters/kube/http.ts';
import { API_GROUP } from '../../domain/api/common.ts';
import { parseRelease } from '../../domain/api/objects.ts';
import { parseReleaseSet, type ReleaseSet } from '../../domain/api/release-set.ts';
import { FleetAnnotation, FleetLabel } from '../../domain/fleet/labels.ts';
import { setVerdict, type SetVerdict } from '../../domain/fleet/set-verdict.ts';
import { combinedVerdict, type Verdict } from '../../domain/status/verdict.ts';
import { objectEvents } from '../../views/events.ts';
import {
  allowReleaseSet,
  ApiError,
  checkNamespace,
  mayOnReleaseSets,
  namespaceOf,
  type ApiEnv,
} from './api-common.ts';
import { registerReleaseSetActions } from './release-set-actions.ts';
import { asCaller, asUser, parsedSet, type RawSet, type ReleaseSetDeps } from './release-set-caller.ts';

export type { ReleaseSetDeps } from './release-set-caller.ts';

export interface ReleaseSetSummary {
  namespace: string;
  name: string;
  createdAt?: string;
  verdict: SetVerdict;
  state?: string;
  step?: string;
  clusters?: NonNullable<ReleaseSet['status']>['clusters'];
  revision?: string;
  paused: boolean;
}

export interface ChildSummary {
  name: string;
  cluster: string;
  revision?: string;
  verdict: Verdict;
}

export function summarizeSet(set: ReleaseSet): ReleaseSetSummary {
  const s = set.status;
  return {
    namespace: set.metadata.namespace ?? '',
    name: set.metadata.name,
    ...(set.metadata.creationTimestamp !== undefined ? { createdAt: set.metadata.creationTimestamp } : {}),
    verdict: setVerdict(set),
    ...(s?.rollout !== undefined ? { state: s.rollout.state, step: s.rollout.stepName } : {}),
    ...(s?.clusters !== undefined ? { clusters: s.clusters } : {}),
    ...(s?.revision !== undefined ? { revision: s.revision.id } : {}),
    paused: set.spec.rollout.paused,
  };
}

/** The raw object without managedFields (the API's answers stay small). */
function withoutManagedFields(raw: RawSet): RawSet {
  const { managedFields: _dropped, ...metadata } = raw.metadata ?? {};
  return { ...raw, metadata };
}

export function registerReleaseSetRoutes(app: Hono<ApiEnv>, deps: ReleaseSetDeps): void {
  const base = '/v1/namespaces/:ns/releasesets/:name';

  const listIn = (c: Context<ApiEnv>, namespace: string | undefined): Promise<ReleaseSetSummary[]> =>
    asUser(deps, c, async (cluster) => {
      try {
        const { items } = await cluster.client.list<RawSet>(releaseSetPath(namespace));
        return items.flatMap((raw) => {
          const parsed = parseReleaseSet(raw);
          return parsed.ok ? [summarizeSet(parsed.value)] : [];
        });
      } catch (error) {
        throw asCaller(
          error,
          c.get('identity').user,
          `list releasesets.${API_GROUP}${namespace === undefined ? ' in every namespace' : ` in namespace "${namespace}"`}`,
        );
      }
    });

  app.get('/v1/releasesets', async (c) => {
    const ns = c.req.query('namespace');
    const id = c.get('identity');
    if (ns !== undefined && ns !== '') {
      const namespace = checkNamespace(ns);
      const allowed = await mayOnReleaseSets(deps.auth, id, 'list', namespace);
      return c.json(
        {
          scope: 'namespaces',
          namespaces: allowed ? [namespace] : [],
          items: allowed ? await listIn(c, namespace) : [],
        },
        200,
      );
    }
    if (await mayOnReleaseSets(deps.auth, id, 'list', '')) {
      const items = await listIn(c, undefined);
      return c.json(
        { scope: 'cluster', namespaces: [...new Set(items.map((s) => s.namespace))].sort(), items },
        200,
      );
    }
    const candidates = await deps.releaseNamespaces();
    const allowed: string[] = [];
    for (const namespace of candidates)
      if (await mayOnReleaseSets(deps.auth, id, 'list', namespace)) allowed.push(namespace);
    const items = (await Promise.all(allowed.map((namespace) => listIn(c, namespace)))).flat();
    return c.json({ scope: 'namespaces', namespaces: allowed.sort(), items }, 200);
  });

  app.get('/v1/namespaces/:ns/releasesets', async (c) => {
    const namespace = namespaceOf(c);
    const id = c.get('identity');
    if (!(await mayOnReleaseSets(deps.auth, id, 'list', namespace)))
      throw new ApiError(
        403,
        'Forbidden',
        `user "${id.user}" may not list releasesets.convoy.dev in namespace "${namespace}"; ask for a Role that grants "list" on releasesets.convoy.dev`,
      );
    return c.json({ items: await listIn(c, namespace) }, 200);
  });

  app.get(base, async (c) => {
    const key = await allowReleaseSet(deps.auth, c, 'get');
    const body = await asUser(deps, c, async (cluster) => {
      let raw: RawSet;
      try {
        raw = await cluster.client.get<RawSet>(releaseSetPath(key.namespace, key.name));
      } catch (error) {
        throw asCaller(
          error,
          key.user,
          `get releasesets.${API_GROUP} "${key.name}" in namespace "${key.namespace}"`,
          key,
        );
      }
      const set = parsedSet(raw, key);
      let children: ChildSummary[] | null = null;
      let childrenMessage: string | undefined;
      try {
        const { items } = await cluster.client.list<Record<string, unknown>>(releasePath(key.namespace), {
          labelSelector: `${FleetLabel.releaseSet}=${key.name}`,
        });
        children = items
          .flatMap((r) => {
            const parsed = parseRelease(r);
            if (!parsed.ok) return [];
            const release = parsed.value;
            const revision = release.metadata.annotations?.[FleetAnnotation.revision];
            return [
              {
                name: release.metadata.name,
                cluster: release.metadata.labels?.[FleetLabel.cluster] ?? release.spec.cluster.name,
                ...(revision !== undefined ? { revision } : {}),
                verdict: combinedVerdict(release),
              },
            ];
          })
          .sort((a, b) => a.name.localeCompare(b.name));
      } catch (error) {
        if (!isKubeApiError(error, 403))
          throw asCaller(error, key.user, `list releases.${API_GROUP} in namespace "${key.namespace}"`);
        childrenMessage = `user "${key.user}" may not list releases.${API_GROUP} in namespace "${key.namespace}", so the child Releases are not shown`;
      }
      return {
        releaseSet: withoutManagedFields(raw),
        verdict: setVerdict(set),
        children,
        ...(childrenMessage !== undefined ? { childrenMessage } : {}),
      };
    });
    return c.json(body, 200);
  });

  app.get(`${base}/events`, async (c) => {
    const key = await allowReleaseSet(deps.auth, c, 'get');
    const events = await asUser(deps, c, async (cluster) => {
      try {
        return await objectEvents(cluster, key, 'ReleaseSet');
      } catch (error) {
        throw asCaller(error, key.user, `list events.events.k8s.io in namespace "${key.namespace}"`);
      }
    });
    return c.json({ events }, 200);
  });

  registerReleaseSetActions(app, deps, base);
}
