/**
 * `convoy sync --wait [--timeout 5m]`: after the request, the verdict of the reconcile that took it,
 * as `flux reconcile` and `argocd app sync` wait for theirs. The request is taken when the status
 * echoes it — status.lastHandledForceSyncAt (a force sync) or status.lastHandledSyncAt (manual sync
 * mode) equal to the request — or when status.lastAttempted.attemptedAt is after the request's second.
 * Both times are whole seconds, so a reconcile that started before the request in the same second
 * has attemptedAt equal to it and is not taken for the answer; to make the answering reconcile fall
 * in a later second, the request is written late in its second (at .900 s or after). Until it is
 * taken the wait prints that it waits for it; then it is `convoy wait` (cli/wait.ts): exit 0 Ready,
 * 1 a failure or the timeout, 4 suspended.
 */
import type { Release } from '../domain/api/objects.ts';
import type { ReleaseKey } from '../views/cluster.ts';
import type { VerbInput } from './args.ts';
import { readRelease } from './kube.ts';
import type { ExitCode } from './output.ts';
import type { Session } from './session.ts';
import { releaseTarget } from './wait.ts';
import { waitVerbFor } from './wait-loop.ts';

const LATE_IN_SECOND_MS = 900;

/** How long to sleep from `now` (ms since the epoch) until .900 s of its second or later. */
export function msToLateInSecond(now: number): number {
  const ms = now % 1000;
  return ms >= LATE_IN_SECOND_MS ? 0 : LATE_IN_SECOND_MS - ms;
}

export interface SyncRequest {
  /** The annotation's value: the request's time, RFC 3339 in whole seconds. */
  readonly value: string;
  readonly force: boolean;
}

/** Whether the status shows a reconcile that took the request. */
export function syncTaken(release: Release, request: SyncRequest): boolean {
  const status = release.status;
  if (status === undefined) return false;
  if (
    request.force
      ? status.lastHandledForceSyncAt === request.value
      : status.lastHandledSyncAt === request.value
  )
    return true;
  const attempted = status.lastAttempted?.attemptedAt;
  return attempted !== undefined && Date.parse(attempted) > Date.parse(request.value);
}

export function waitForSync(
  input: VerbInput,
  s: Session,
  key: ReleaseKey,
  request: SyncRequest,
): Promise<ExitCode> {
  const verdict = releaseTarget(key);
  return waitVerbFor(
    input,
    s,
    () => () =>
      Promise.resolve([
        {
          what: verdict.what,
          async read(cluster) {
            const release = await readRelease(cluster, key);
            if (release.spec.suspend || syncTaken(release, request)) return verdict.read(cluster);
            return {
              state: 'waiting',
              line: `waiting for a reconcile to take the sync requested at ${request.value}`,
            };
          },
        },
      ]),
  );
}
