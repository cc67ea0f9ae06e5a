/**
 * Which render a rollback pins, shared by `convoy rollback`, the HTTP API's POST …/rollback and the
 * dashboard's button (docs/decisions.md, "rollback = the previous render"), like `helm rollback`
 * and `argocd app rollback`:
 *
 * - by default the render applied before the current one (status.rollout.previousRenderRef: the
 *   applied render when the newest rollout started), so a second rollback goes forward again;
 * - `to`: the render named (the caller has resolved and checked it: a short ref in the CLI, a
 *   stored render in the API);
 * - `lastHealthy`: status.lastHealthy.renderRef (the default before rollback followed `helm rollback`).
 *
 * `to` with `lastHealthy` is a usage error. A refusal says what is missing; the caller adds how to
 * name a render in its own terms (`--to <renderRef>`, `{"to": …}`).
 */
import type { Release } from '../api/objects.ts';

export interface RollbackRequest {
  readonly to?: string;
  readonly lastHealthy?: boolean;
}

export type RollbackTarget =
  | { readonly ok: true; readonly ref: string; readonly why: string }
  | {
      readonly ok: false;
      readonly reason: 'ConflictingOptions' | 'NoRender' | 'NoPreviousRender' | 'NoHealthyRender';
      readonly message: string;
    };

/** The first 12 hex digits of a render ref, as `convoy history` shows them. */
const short = (ref: string): string => ref.replace(/^sha256:/, '').slice(0, 12);

export function rollbackTarget(
  release: Pick<Release, 'status'>,
  request: RollbackRequest,
  name: string,
): RollbackTarget {
  if (request.to !== undefined && request.lastHealthy === true)
    return {
      ok: false,
      reason: 'ConflictingOptions',
      message: 'to names a render and lastHealthy asks for the last healthy one; give one of them',
    };
  if (request.to !== undefined) return { ok: true, ref: request.to, why: 'the render named' };
  if (request.lastHealthy === true) {
    const healthy = release.status?.lastHealthy?.renderRef;
    if (healthy === undefined)
      return {
        ok: false,
        reason: 'NoHealthyRender',
        message: `Release ${name} has no healthy render to roll back to (status.lastHealthy is not set)`,
      };
    return { ok: true, ref: healthy, why: 'the last healthy render' };
  }
  const rollout = release.status?.rollout;
  if (rollout === undefined)
    return {
      ok: false,
      reason: 'NoRender',
      message: `Release ${name} has applied no render yet: there is nothing to roll back to`,
    };
  if (rollout.previousRenderRef === undefined)
    return {
      ok: false,
      reason: 'NoPreviousRender',
      message: `Release ${name} has no previous render: ${short(rollout.renderRef)} is the first it applied`,
    };
  return {
    ok: true,
    ref: rollout.previousRenderRef,
    why: `the render applied before ${short(rollout.renderRef)}`,
  };
}
