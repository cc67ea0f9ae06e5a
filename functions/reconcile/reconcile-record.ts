import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { parseRelease, type Release } from '../../domain/api/objects.ts';
import type { ProgressPort, ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { reconcile } from '../../domain/reconcile/reconcile.ts';
import { recheckWaitingWave, withSeenReads, type SeenReads } from '../../domain/reconcile/recheck.ts';
import { isDependencyChange } from '../../adapters/reconcile/ttl-cache.ts';
import { dropped, stop, type Outcome } from '../../domain/runtime/outcome.ts';
import type { Loop, QueueMessage } from '../../domain/runtime/queue-message.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import type { EventRecorder } from '../../adapters/kube/events.ts';
import { observeWrites } from './release-events.ts';
import { appliedHint, type HintKey } from '../runtime/applied-hint.ts';
import { runOf } from '../runtime/lease-guard.ts';
import { StatusRefusedError, type StatusWriter } from '../../adapters/kube/status-writer.ts';
import { concludeStatusRefused } from '../../domain/reconcile/conclude.ts';
import { createKubeClient, resourcePath } from '../../adapters/kube/http.ts';
import type { KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { isNotFound } from '../../adapters/kube/management-reader.ts';
import type { RecordContext, RecordHandler } from '../runtime/sqs-batch-handler.ts';
import type { QueueBacklog } from '../../adapters/sqs/queue-backlog.ts';
import { noticesWaitForRolloutEnd } from '../../domain/runtime/burst-yield.ts';

export interface ReleaseSource {
  /**
   * The Release as stored now, or undefined when it no longer exists. `message`: the run's
   * message, whose Release the Lease guard may have read already (functions/runtime/release-reads.ts).
   */
  get(namespace: string, name: string, message?: QueueMessage): Promise<unknown>;
}

export function createReleaseSource(config: KubeClientConfig): ReleaseSource {
  const client = createKubeClient(config);
  return {
    async get(namespace, name) {
      try {
        return await client.get<unknown>(resourcePath(`${API_GROUP}/${API_VERSION}`, 'releases', namespace, name));
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },
  };
}

/** Sends a Release to another loop's queue at once. */
export type Notifier = (loop: Loop, release: Release, cause: string, applied?: QueueMessage['applied']) => Promise<void>;

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
 * Loads the Release a message names, reconciles it and writes the
 * convoy-release status slice. A message for a deleted or replaced Release
 * (uid differs) is dropped.
 *
 * The Release is always the live one (issue 20: a message is a hint, never an authority): the
 * functions' runtime reads it before the Lease (functions/runtime/release-reads.ts, `admit`) and
 * `releases` hands this handler that same answer; nothing a message carries — the relay's copy,
 * a spec, a namespace — is ever reconciled.
 */
export function createReconcileRecordHandler(deps: ReconcileRecordDeps): RecordHandler {
  return async (message: QueueMessage, ctx: RecordContext): Promise<Outcome> => {
    const release = await loadRelease(deps.releases, message, ctx);
    if (!('metadata' in release)) return release;
    // The recheck of a Progressing rollout (a redelivery) looks at the wave it waits on only,
    // unless the message announces a push or a changed dependency (domain/reconcile/recheck.ts).
    const seen: SeenReads = new Map();
    if (ctx.receiveCount > 1 && !message.cause.startsWith('git push ') && !isDependencyChange(message.cause)) {
      const waiting = await recheckWaitingWave(release, deps.ports, seen);
      if (waiting !== undefined) {
        const run = runOf(ctx);
        const slice = run === undefined ? waiting.slice : { ...waiting.slice, reconciledAt: run.markFor(waiting.outcome) };
        try {
          await deps.statusWriter.apply({ namespace: message.namespace, name: message.name }, { manager: FieldManager.release, slice });
        } catch (error) {
          if (isNotFound(error)) return dropped('the Release was deleted during the reconcile', { gone: true });
          throw error;
        }
        run?.wrote(slice.reconciledAt);
        ctx.logger.info('reconciled', { recheck: 'the wave it waits on', reason: waiting.outcome.kind === 'requeueAfter' ? waiting.outcome.reason : undefined });
        return waiting.outcome;
      }
    }
    const writes = observeWrites({ ...deps.ports, cluster: withSeenReads(deps.ports.cluster, release, seen) });
    const progress = progressPort(deps, { namespace: message.namespace, name: message.name }, ctx);
    const result = await reconcile(release, progress === undefined ? writes.ports : { ...writes.ports, progress });
    if (result.kind === 'suspended') {
      ctx.logger.info('suspended: not reconciled');
      return stop();
    }
    const log = ctx.logger.child({ renderRef: result.renderRef });
    const key = { namespace: message.namespace, name: message.name };
    // The status write closes the run's Lease (domain/runtime/lease-close.ts), so it is the run's
    // last act: the Events go first, and so do the messages to drift and health when they carry
    // the Release as written (applied-hint.ts). Messages without it make the observers read the
    // Release, so they follow the write, which then carries the later mark (it closes nothing).
    const run = runOf(ctx);
    const notifyLoops = (await noticesWait(deps, release, result)) ? [] : result.notify;
    if (notifyLoops.length < result.notify.length) log.info('a reconcile burst: drift and health are told when the rollout is over', { notifyCause: result.notifyCause });
    const hint = notifyLoops.length > 0 && deps.hintKey && result.observed ? appliedHint(deps.hintKey, release, { manager: FieldManager.release, slice: result.slice }, result.observed) : undefined;
    const notifyAfter = notifyLoops.length > 0 && hint === undefined;
    const slice = run === undefined ? result.slice : { ...result.slice, reconciledAt: notifyAfter ? run.markWithWorkAfter : run.markFor(result.outcome) };
    const notify = async () => {
      const cause = result.notifyCause ?? `applied ${result.renderRef ?? ''}`.trim();
      for (const loop of notifyLoops) await deps.notify(loop, release, cause, hint);
    };
    await writes.emit(deps.events, release, slice, log);
    for (const warning of result.warnings) log.warn(warning);
    if (!notifyAfter) await notify();
    const applied = slice.conditions.find((c) => c.type === 'Applied');
    try {
      await deps.statusWriter.apply(key, { manager: FieldManager.release, slice });
    } catch (error) {
      // Deleted while it was reconciled: nothing left to report on.
      if (isNotFound(error)) return dropped('the Release was deleted during the reconcile', { gone: true });
      if (!(error instanceof StatusRefusedError)) throw error;
      // convoy computed a status its own CRD refuses: say so in Applied instead of retrying forever.
      log.error('the reconcile status was refused; writing Applied False/DeployFailed instead', { error });
      const refused = concludeStatusRefused(release, deps.ports.now(), error.message, result.slice.resolvedRetentionPolicy ?? deps.ports.retentionDefault);
      const refusedSlice = run === undefined ? refused.slice : { ...refused.slice, reconciledAt: run.markFor(refused.outcome) };
      await deps.statusWriter.apply(key, { manager: FieldManager.release, slice: refusedSlice });
      run?.wrote(refusedSlice.reconciledAt);
      return refused.outcome;
    }
    run?.wrote(slice.reconciledAt);
    if (notifyAfter) await notify();
    log.info('reconciled', { applied: applied?.reason, phase: slice.lastAttempted?.phase });
    return result.outcome;
  };
}

/** Whether this run's notices wait for the run that finishes its rollout (a first deploy during a burst). */
async function noticesWait(deps: ReconcileRecordDeps, release: Release, result: { notify: readonly string[]; slice: { rollout?: { state?: string } | undefined }; outcome: Outcome }): Promise<boolean> {
  if (deps.reconcileBacklog === undefined || result.notify.length === 0) return false;
  const firstDeploy = release.status?.lastSuccessful === undefined;
  const rolloutProgressing = result.slice.rollout?.state === 'Progressing';
  if (!firstDeploy || !rolloutProgressing || result.outcome.kind !== 'requeueAfter') return false;
  return noticesWaitForRolloutEnd({ backlog: await deps.reconcileBacklog(), firstDeploy, rolloutProgressing, outcome: result.outcome });
}

/**
 * The run's progress writes: the same writer and field manager as its last write. A failed one is
 * logged and the run goes on (its last write reports the run); it never carries the run's mark,
 * so it leaves the Lease busy (domain/reconcile/conclude.ts, concludeProgress).
 */
function progressPort(deps: ReconcileRecordDeps, key: { namespace: string; name: string }, ctx: RecordContext): ProgressPort | undefined {
  if (deps.progress === undefined) return undefined;
  return {
    policy: { intervalMs: deps.progress.intervalMs },
    async write(slice) {
      try {
        await deps.statusWriter.apply(key, { manager: FieldManager.release, slice });
      } catch (error) {
        ctx.logger.warn('writing the run\'s progress to status failed; the run goes on', { error: error instanceof Error ? error.message : String(error) });
      }
    },
  };
}

/** The Release of a message, or the Outcome that ends the message without work. */
export async function loadRelease(
  releases: ReleaseSource,
  message: QueueMessage,
  ctx: RecordContext,
): Promise<Release | Outcome> {
  const raw = await releases.get(message.namespace, message.name, message);
  if (raw === undefined) return dropped('the Release no longer exists', { gone: true });
  const parsed = parseRelease(raw);
  if (!parsed.ok) {
    ctx.logger.error('the Release does not parse; was it written before the CRD schema?', { reason: parsed.error });
    return stop();
  }
  if (message.uid !== '' && parsed.value.metadata.uid !== message.uid) {
    return dropped(`the message is for uid ${message.uid}, the Release now has uid ${parsed.value.metadata.uid ?? '?'}`, { gone: true });
  }
  return parsed.value;
}
