import { Annotation, annotationOf, isNewRequest } from './annotations.ts';
import type { ReconcileEnd } from './reconcile-end.ts';
import { halt } from './halt.ts';
import type { SyncRun } from './run.ts';

export type ManualSyncCheck =
  /** The run ends here: WaitingForSync, or Applied True when the render is the one last applied. */
  | { wait: Pick<ReconcileEnd, 'halt' | 'upToDateMessage'> }
  /** The run goes on; `handledSyncAt`: the /sync request it answers, set once it applied the render. */
  | { handledSyncAt: string | undefined };

/**
 * Step "Manual sync mode": in mode Manual a changed render waits for a `/sync` request (row
 * "Manual sync mode: no /sync request", WaitingForSync). A force sync, or a rollout of this
 * render already under way, goes on without one; an unchanged render is Applied True.
 */
export function checkManualSync(run: SyncRun): ManualSyncCheck {
  const { release, renderRef } = run;
  const status = release.status;
  const manual = release.spec.syncPolicy.mode === 'Manual';
  const syncRequest = annotationOf(release, Annotation.syncRequestedAt);
  const syncRequested = manual && isNewRequest(syncRequest, status?.lastHandledSyncAt);
  if (manual && !syncRequested && !run.forced && !run.inFlight) {
    if (status?.lastSuccessful?.renderRef === renderRef) {
      return {
        wait: { upToDateMessage: `manual sync mode: the render ${renderRef} is the one last applied` },
      };
    }
    return {
      wait: {
        halt: halt(
          'waitingForSync',
          `manual sync mode: render ${renderRef} differs from the last applied render; POST …/sync to apply it`,
        ),
      },
    };
  }
  return { handledSyncAt: syncRequested ? syncRequest : undefined };
}
