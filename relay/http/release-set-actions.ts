/**
 * The operator actions on a ReleaseSet through the relay API: approve a step, pause, resume, and
 * request a rollback. Each reads the set and replaces it (PUT, verb `update`, what the review
 * asked) with the caller's token and its resourceVersion; a conflict with a concurrent writer is
 * retried on a fresh read. The reads are release-set-api.ts.
 */
import type { Context, Hono } from 'hono';
import { releaseSetPath } from '../../adapters/kube/convoy-paths.ts';
import { isKubeApiError } from '../../adapters/kube/http.ts';
import { API_GROUP } from '../../domain/api/common.ts';
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { FleetAnnotation } from '../../domain/fleet/labels.ts';
import { approvalFor, rollbackFor } from '../../domain/fleet/operator-requests.ts';
import { allowReleaseSet, ApiError, type ApiEnv } from './api-common.ts';
import { asCaller, asUser, parsedSet, type RawSet, type ReleaseSetDeps } from './release-set-caller.ts';

const CONFLICT_ATTEMPTS = 3;

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

/** POST …/approve, …/pause, …/resume and …/rollback under `base` (the path of one ReleaseSet). */
export function registerReleaseSetActions(app: Hono<ApiEnv>, deps: ReleaseSetDeps, base: string): void {
  /** Read, change, replace, all as the caller; a 409 from a concurrent write is retried on a fresh read. */
  const update = (
    c: Context<ApiEnv>,
    key: { namespace: string; name: string; user: string },
    change: (set: ReleaseSet, raw: RawSet) => void,
  ): Promise<void> =>
    asUser(deps, c, async (cluster) => {
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
