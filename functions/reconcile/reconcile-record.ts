import type { Release } from '../../domain/api/objects.ts';
import type { ProgressPort, ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { reconcile } from '../../domain/reconcile/reconcile.ts';
import { recheckWaitingWave, withSeenReads, type SeenReads } from '../../domain/reconcile/recheck.ts';
import { isDependencyChange } from '../../adapters/reconcile/ttl-cache.ts';
import { stop, type Outcome } from '../../domain/runtime/outcome.ts';
import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { Decided } from '../../domain/runtime/run-decision.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import type { AnySlice } from '../../domain/status/slices.ts';
import type { EventRecorder } from '../../adapters/kube/events.ts';
import type { ReleaseSource } from '../../adapters/kube/release-source.ts';
import type { StatusWriter } from '../../adapters/kube/status-writer.ts';
import type { QueueBacklog } from '../../adapters/sqs/queue-backlog.ts';
import { noticesWaitForRolloutEnd } from '../../domain/runtime/burst-yield.ts';
import { observeWrites } from './release-events.ts';
import { reconcileDecision, recheckDecision } from './reconcile-decision.ts';
import type { HintKey } from '../runtime/applied-hint.ts';
import type { Notifier } from '../runtime/notifier.ts';
import { loadRelease } from '../runtime/release-reads.ts';
import { committing, releaseCommitPorts, type LoopRun } from '../runtime/run-commit.ts';
import type { RecordContext, RecordHandler } from '../runtime/sqs-batch-handler.ts';

export interface ReconcileRecordDeps {
  releases: ReleaseSource;
  statusWriter: StatusWriter;
  ports: ReconcilePorts;
  notify: Notifier;
  /** Events about the Release (release-events.ts); undefined: none are written. */
  events?: EventRecorder | undefined;
  /** Seals the applied hint to drift and health (functions/runtime/clients.ts); undefined: no hint is sent, they read. */
  hintKey?: HintKey | undefined;
  /**
   * A run longer than intervalMs writes its progress to status (lastAttempted phase Syncing with
   * counts, domain/reconcile/progress.ts) at most every intervalMs; undefined: it writes none.
   */
  progress?: { intervalMs: number } | undefined;
  /**
   * The reconcile queue's backlog (adapters/sqs/queue-backlog.ts): during a burst a first deploy
   * that will be rechecked holds its notices to drift and health back (domain/runtime/burst-yield.ts
   * noticesWaitForRolloutEnd); undefined: it always sends them.
   */
  reconcileBacklog?: QueueBacklog | undefined;
}

/**
 * The reconcile loop's run: loads the Release a message names, reconciles it and decides the
 * convoy-release status slice and the effects around it (reconcile-decision.ts); the runtime
 * commits that (functions/runtime/run-commit.ts). A message for a deleted or replaced Release
 * (uid differs) is dropped.
 *
 * The Release is always the live one (a message is a hint, never an authority): the
 * functions' runtime reads it before the Lease (functions/runtime/release-reads.ts, `admit`) and
 * `releases` hands this handler that same answer; nothing a message carries — the relay's copy,
 * a spec, a namespace — is ever reconciled.
 */
export function createReconcileRun(deps: ReconcileRecordDeps): LoopRun<AnySlice> {
  return {
    decide: (message, ctx) => decideReconcile(deps, message, ctx),
    commit: releaseCommitPorts('reconcile', deps),
  };
}

/** The reconcile run without a Lease: decides and commits at once (tests, benchmarks). */
export function createReconcileRecordHandler(deps: ReconcileRecordDeps): RecordHandler {
  return committing('reconcile', createReconcileRun(deps));
}

async function decideReconcile(
  deps: ReconcileRecordDeps,
  message: QueueMessage,
  ctx: RecordContext,
): Promise<Decided<AnySlice>> {
  const release = await loadRelease(deps.releases, message, ctx);
  if (!('metadata' in release)) return release;
  // The recheck of a Progressing rollout (a redelivery) looks at the wave it waits on only,
  // unless the message announces a push or a changed dependency (domain/reconcile/recheck.ts).
  const seen: SeenReads = new Map();
  if (ctx.receiveCount > 1 && !message.cause.startsWith('git push ') && !isDependencyChange(message.cause)) {
    const waiting = await recheckWaitingWave(release, deps.ports, seen);
    if (waiting !== undefined) return recheckDecision(waiting);
  }
  const writes = observeWrites({ ...deps.ports, cluster: withSeenReads(deps.ports.cluster, release, seen) });
  const progress = progressPort(deps, { namespace: message.namespace, name: message.name }, ctx);
  const result = await reconcile(
    release,
    progress === undefined ? writes.ports : { ...writes.ports, progress },
  );
  if (result.kind === 'suspended') {
    ctx.logger.info('suspended: not reconciled');
    return stop();
  }
  const log = ctx.logger.child({ renderRef: result.renderRef });
  const noticesWait = await noticesWaitFor(deps, release, result);
  if (noticesWait)
    log.info('a reconcile burst: drift and health are told when the rollout is over', {
      notifyCause: result.notifyCause,
    });
  for (const warning of result.warnings) log.warn(warning);
  return reconcileDecision({
    release,
    result,
    events: writes.events(release, result.slice),
    noticesWait,
    hintKey: deps.hintKey,
    ports: deps.ports,
  });
}

/** Whether this run's notices wait for the run that finishes its rollout (a first deploy during a burst). */
async function noticesWaitFor(
  deps: ReconcileRecordDeps,
  release: Release,
  result: {
    notify: readonly string[];
    slice: { rollout?: { state?: string } | undefined };
    outcome: Outcome;
  },
): Promise<boolean> {
  if (deps.reconcileBacklog === undefined || result.notify.length === 0) return false;
  const firstDeploy = release.status?.lastSuccessful === undefined;
  const rolloutProgressing = result.slice.rollout?.state === 'Progressing';
  if (!firstDeploy || !rolloutProgressing || result.outcome.kind !== 'requeueAfter') return false;
  return noticesWaitForRolloutEnd({
    backlog: await deps.reconcileBacklog(),
    firstDeploy,
    rolloutProgressing,
    outcome: result.outcome,
  });
}

/**
 * The run's progress writes: the same writer and field manager as its last write. A failed one is
 * logged and the run goes on (its last write reports the run); it never carries the run's mark,
 * so it leaves the Lease busy (domain/reconcile/conclude.ts, concludeProgress).
 */
function progressPort(
  deps: ReconcileRecordDeps,
  key: { namespace: string; name: string },
  ctx: RecordContext,
): ProgressPort | undefined {
  if (deps.progress === undefined) return undefined;
  return {
    policy: { intervalMs: deps.progress.intervalMs },
    async write(slice) {
      try {
        await deps.statusWriter.apply(key, { manager: FieldManager.release, slice });
      } catch (error) {
        ctx.logger.warn("writing the run's progress to status failed; the run goes on", {
          error: error instanceof Error ? error.message : String(error),
        });
      }
    },
  };
}
