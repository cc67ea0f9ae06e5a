/**
 * The HTTP API of ReleaseSets (issue 26; docs/api.md "HTTP API: ReleaseSets"), with the rules of
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
 * A write reads the set and replaces it (PUT, verb `update`, what the review asked) with the
 * caller's token and its resourceVersion; a conflict with a concurrent writer is retried.
 */
import type { Context, Hono } from 'hono';
import { releasePath, releaseSetPath } from '../../adapters/kube/convoy-paths.ts';
import { isKubeApiError, KubeTransportError } from '../../adapters/kube/http.ts';
import { API_GROUP } from '../../domain/api/common.ts';
import { parseRelease } from '../../domain/api/objects.ts';
import { parseReleaseSet, type ReleaseSet } from '../../domain/api/release-set.ts';
import { FleetAnnotation, FleetLabel } from '../../domain/fleet/labels.ts';
import { approvalFor, rollbackFor } from '../../domain/fleet/operator-requests.ts';
import { setVerdict, type SetVerdict } from '../../domain/fleet/set-verdict.ts';
import { combinedVerdict, type Verdict } from '../../domain/status/verdict.ts';
import { objectEvents } from '../../views/events.ts';
import type { Cluster } from '../../views/cluster.ts';
import {
  allowReleaseSet,
  ApiError,
  checkNamespace,
  mayOnReleaseSets,
  namespaceOf,
  type ApiEnv,
} from './api-common.ts';
import type { Authenticator } from './auth.ts';
import type { UserClusters } from './user-cluster.ts';

export interface ReleaseSetDeps {
  readonly auth: Authenticator;
  /** Absent: every ReleaseSet route answers 501 (no way to act with the caller's token). */
  readonly userClusters?: UserClusters | undefined;
  /** Namespaces that hold Releases (the Release list's cache): where a caller without a cluster-wide list right may have sets. */
  readonly releaseNamespaces: () => Promise<string[]>;
  readonly logger?: { info(msg: string, fields?: Readonly<Record<string, unknown>>): void } | undefined;
}

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

const CONFLICT_ATTEMPTS = 3;

type RawSet = Record<string, unknown> & {
  metadata?: Record<string, unknown> & {
    namespace?: string;
    name?: string;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
};

function parsedSet(raw: unknown, key: { namespace: string; name: string }): ReleaseSet {
  const parsed = parseReleaseSet(raw);
  if (!parsed.ok)
    throw new ApiError(
      500,
      'InvalidReleaseSet',
      `ReleaseSet ${key.namespace}/${key.name} does not match the convoy API this relay knows: ${parsed.error}`,
    );
  return parsed.value;
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

/** A Kubernetes answer to the caller's own request, as the API's answer. */
function asCaller(
  error: unknown,
  user: string,
  what: string,
  key?: { namespace: string; name: string },
): unknown {
  if (isKubeApiError(error, 403))
    return new ApiError(
      403,
      'Forbidden',
      `user "${user}" may not ${what} (the API server refused it with the caller's token)`,
    );
  if (isKubeApiError(error, 401))
    return new ApiError(401, 'Unauthorized', 'the bearer token is not valid any more; sign in again');
  if (isKubeApiError(error, 404) && key !== undefined)
    return new ApiError(
      404,
      'NotFound',
      `ReleaseSet ${key.namespace}/${key.name} does not exist: check the namespace and name (kubectl get releasesets.${API_GROUP} -n ${key.namespace})`,
    );
  if (error instanceof KubeTransportError)
    return new ApiError(
      503,
      'Unavailable',
      `the API server could not be reached: ${error.reason}; retry later`,
    );
  return error;
}

/** The body of POST …/approve: empty, `{}` or `{"step": "<name>"}`. */
async function approveBody(c: Context<ApiEnv>): Promise<string | undefined> {
  const text = await c.req.text();
  if (text.trim() === '') return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ApiError(400, 'InvalidRequest', 'the body is not JSON; send {} or {"step": "<step name>"}');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ApiError(
      400,
      'InvalidRequest',
      'the body is not a JSON object; send {} or {"step": "<step name>"}',
    );
  const step = (raw as { step?: unknown }).step;
  if (step !== undefined && (typeof step !== 'string' || step === '' || step.length > 63))
    throw new ApiError(
      400,
      'InvalidRequest',
      'step must be the name of a step (a string of 1-63 characters)',
      'step',
    );
  return step;
}

export function registerReleaseSetRoutes(app: Hono<ApiEnv>, deps: ReleaseSetDeps): void {
  const base = '/v1/namespaces/:ns/releasesets/:name';

  const asUser = async <T>(c: Context<ApiEnv>, use: (cluster: Cluster) => Promise<T>): Promise<T> => {
    if (deps.userClusters === undefined)
      throw new ApiError(
        501,
        'NotImplemented',
        "this relay has no management cluster address for acting with the caller's token",
      );
    const cluster = deps.userClusters.open(c.get('token'));
    try {
      return await use(cluster);
    } finally {
      cluster.close();
    }
  };

  const listIn = (c: Context<ApiEnv>, namespace: string | undefined): Promise<ReleaseSetSummary[]> =>
    asUser(c, async (cluster) => {
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

  /** Read, change, replace, all as the caller; a 409 from a concurrent write is retried on a fresh read. */
  const update = (
    c: Context<ApiEnv>,
    key: { namespace: string; name: string; user: string },
    change: (set: ReleaseSet, raw: RawSet) => void,
  ): Promise<void> =>
    asUser(c, async (cluster) => {
      for (let attempt = 1; ; attempt++) {
        try {
          const raw = await cluster.client.get<RawSet>(releaseSetPath(key.namespace, key.name));
          change(parsedSet(raw, key), raw);
          await cluster.client.replace(releaseSetPath(key.namespace, key.name), raw, {
            fieldManager: 'convoy-relay-api',
          });
          return;
        } catch (error) {
          if (isKubeApiError(error, 409) && attempt < CONFLICT_ATTEMPTS) continue;
          throw asCaller(
            error,
            key.user,
            `update releasesets.${API_GROUP} "${key.name}" in namespace "${key.namespace}"`,
            key,
          );
        }
      }
    });

  const annotate = (raw: RawSet, annotation: string, value: string) => {
    raw.metadata = {
      ...raw.metadata,
      annotations: { ...(raw.metadata?.annotations ?? {}), [annotation]: value },
    };
  };

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
    const body = await asUser(c, async (cluster) => {
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
    const events = await asUser(c, async (cluster) => {
      try {
        return await objectEvents(cluster, key, 'ReleaseSet');
      } catch (error) {
        throw asCaller(error, key.user, `list events.events.k8s.io in namespace "${key.namespace}"`);
      }
    });
    return c.json({ events }, 200);
  });

  app.post(`${base}/approve`, async (c) => {
    const key = await allowReleaseSet(deps.auth, c, 'update');
    const step = await approveBody(c);
    let value = '';
    await update(c, key, (set, raw) => {
      const approval = approvalFor(set, step);
      if (!approval.ok)
        throw new ApiError(
          409,
          'NothingToApprove',
          approval.message,
          step === undefined ? undefined : 'step',
        );
      value = approval.value;
      annotate(raw, FleetAnnotation.approve, value);
    });
    deps.logger?.info('http api: release set step approved', {
      namespace: key.namespace,
      releaseSet: key.name,
      user: key.user,
      value,
    });
    return c.json({ annotation: FleetAnnotation.approve, value }, 200);
  });

  for (const [verb, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    app.post(`${base}/${verb}`, async (c) => {
      const key = await allowReleaseSet(deps.auth, c, 'update');
      await update(c, key, (_set, raw) => {
        const spec = raw.spec ?? {};
        raw.spec = { ...spec, rollout: { ...(spec.rollout as Record<string, unknown> | undefined), paused } };
      });
      deps.logger?.info(`http api: release set ${verb}d`, {
        namespace: key.namespace,
        releaseSet: key.name,
        user: key.user,
      });
      return c.json({ paused }, 200);
    });
  }

  app.post(`${base}/rollback`, async (c) => {
    const key = await allowReleaseSet(deps.auth, c, 'update');
    let answer = { value: '', to: '' };
    await update(c, key, (set, raw) => {
      const rollback = rollbackFor(set);
      if (!rollback.ok) throw new ApiError(409, 'NothingToRollBack', rollback.message);
      answer = { value: rollback.value, to: rollback.to };
      annotate(raw, FleetAnnotation.rollback, rollback.value);
    });
    deps.logger?.info('http api: release set rollback requested', {
      namespace: key.namespace,
      releaseSet: key.name,
      user: key.user,
      ...answer,
    });
    return c.json({ annotation: FleetAnnotation.rollback, ...answer }, 200);
  });
}
