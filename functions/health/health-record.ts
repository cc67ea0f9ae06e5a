import type { Release } from '../../domain/api/objects.ts';
import { healthRefusedVerdict, healthRenderRef, healthSlice, healthVerdict, type HealthObservation } from '../../domain/observe/health-verdict.ts';
import { loadRender } from '../../domain/observe/load-render.ts';
import { healthIsExistence } from '../../domain/health/existence-only.ts';
import type { Outcome } from '../../domain/runtime/outcome.ts';
import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import type { RenderStore } from '../../domain/store/render-store.ts';
import { ClusterResolutionError } from '../../adapters/kube/cluster-resolver.ts';
import { ObserverRequestError, type ObserverTargetResolver } from '../../adapters/kube/observer-target.ts';
import { StatusRefusedError, type StatusWriter } from '../../adapters/kube/status-writer.ts';
import { loadRelease, type ReleaseSource } from '../reconcile/reconcile-record.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RecordContext, RecordHandler } from '../runtime/sqs-batch-handler.ts';
import { hintedRelease, hintedRender, type HintKey } from '../runtime/applied-hint.ts';
import { runOf } from '../runtime/lease-guard.ts';

export interface HealthRecordDeps {
  releases: ReleaseSource;
  statusWriter: StatusWriter;
  targets: ObserverTargetResolver;
  /** undefined: no render store is configured (Healthy stays Pending and says so). */
  renders: RenderStore | undefined;
  now?: () => Date;
  /** The functions' hint key (functions/runtime/clients.ts): a hint is used only under its seal; undefined: none is used. */
  hintKey?: HintKey | undefined;
}

/**
 * Loads the Release a message names, assesses every object of its current
 * render on the target cluster and writes the convoy-health slice
 * (healthSummary and Healthy). Every assessment is written: its
 * healthSummary.checkedAt drives the relay's health timer.
 */
export function createHealthRecordHandler(deps: HealthRecordDeps): RecordHandler {
  const now = deps.now ?? (() => new Date());
  return async (message: QueueMessage, ctx: RecordContext): Promise<Outcome> => {
    const hinted = hintedRelease(deps.hintKey, message, ctx.receiveCount, now());
    const release = hinted?.release ?? (await loadRelease(deps.releases, message, ctx));
    if (!('metadata' in release)) return release;
    const observation = await observeHealth(release, deps, ctx.logger, hinted?.hint);
    // The run's mark (domain/runtime/lease-close.ts): this write, the run's last act, closes its Lease.
    const run = runOf(ctx);
    const first = run === undefined ? now() : new Date(run.mark);
    // A run that must still record something in the Lease carries the later mark (RunMark.markFor).
    const at = run === undefined ? first : new Date(run.markFor(healthVerdict(release, observation, first).outcome));
    const verdict = healthVerdict(release, observation, at);
    const log = ctx.logger.child(observation.kind === 'notAssessed' ? {} : { renderRef: observation.renderRef });
    const key = { namespace: message.namespace, name: message.name };
    try {
      await deps.statusWriter.apply(key, { manager: FieldManager.health, slice: healthSlice(release, verdict, at) });
      run?.wrote(verdict.healthSummary?.checkedAt);
    } catch (error) {
      if (!(error instanceof StatusRefusedError)) throw error;
      // convoy computed a status its own CRD refuses: say so in Healthy instead of retrying forever.
      log.error('the health status was refused; writing Healthy Unknown/Pending instead', { error });
      const refused = healthRefusedVerdict(error.message);
      await deps.statusWriter.apply(key, { manager: FieldManager.health, slice: healthSlice(release, refused, at) });
      run?.wrote(refused.healthSummary?.checkedAt);
      return refused.outcome;
    }
    log.info('health assessed', { healthy: verdict.condition.reason, aggregate: verdict.aggregate });
    return verdict.outcome;
  };
}

async function observeHealth(release: Release, deps: HealthRecordDeps, log: Logger, hint?: NonNullable<QueueMessage['applied']>): Promise<HealthObservation> {
  const renderRef = healthRenderRef(release);
  if (renderRef === undefined) return { kind: 'notAssessed' };
  if (hint !== undefined && hint.renderRef === renderRef) {
    // Right after the apply: assessed from the apply's own answers (applied-hint.ts).
    const render = hintedRender(hint) ?? (await loadRender(deps.renders, release, renderRef));
    if (render.kind === 'loaded' && render.objects.length === hint.live.length) {
      return { kind: 'assessed', renderRef, objects: render.objects.map((object, i) => ({ object, live: hint.live[i] })) };
    }
  }
  try {
    const target = await deps.targets.resolve(release);
    const render = await loadRender(deps.renders, release, renderRef);
    if (render.kind === 'unavailable') return { kind: 'renderUnavailable', renderRef, message: render.message };
    // Kinds whose health is their existence need no more than their metadata (domain/health/existence-only.ts).
    const checked = new Set((release.spec.healthAssessment?.checks ?? []).map((check) => `${check.apiVersion} ${check.kind}`));
    const live = await target.readAll(render.objects, { metadataOnly: (obj) => !checked.has(`${obj.apiVersion} ${obj.kind}`) && healthIsExistence(obj, []) });
    return { kind: 'assessed', renderRef, objects: render.objects.map((object, i) => ({ object, live: live[i] })) };
  } catch (error) {
    if (error instanceof ClusterResolutionError || error instanceof ObserverRequestError) {
      log.warn('the target cluster could not be read', { error });
      return { kind: 'clusterNotReady', renderRef, message: error.message };
    }
    throw error;
  }
}
