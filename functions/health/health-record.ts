import type { Release } from '../../domain/api/objects.ts';
import { healthRenderRef, type HealthObservation } from '../../domain/observe/health-verdict.ts';
import { loadRender } from '../../domain/observe/load-render.ts';
import { healthIsExistence } from '../../domain/health/existence-only.ts';
import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { Decided } from '../../domain/runtime/run-decision.ts';
import type { AnySlice } from '../../domain/status/slices.ts';
import type { RenderStore } from '../../domain/store/render-store.ts';
import { ClusterResolutionError } from '../../adapters/kube/cluster-resolver.ts';
import { ObserverRequestError, type ObserverTargetResolver } from '../../adapters/kube/observer-target.ts';
import type { ReleaseSource } from '../../adapters/kube/release-source.ts';
import type { StatusWriter } from '../../adapters/kube/status-writer.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RecordContext, RecordHandler } from '../runtime/sqs-batch-handler.ts';
import { hintedRelease, hintedRender, type HintKey } from '../runtime/applied-hint.ts';
import { loadRelease } from '../runtime/release-reads.ts';
import { committing, releaseCommitPorts, type LoopRun } from '../runtime/run-commit.ts';
import { healthDecision } from './health-decision.ts';

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
 * The health loop's run: loads the Release a message names, assesses every object of its current
 * render on the target cluster and decides the convoy-health slice (healthSummary and Healthy,
 * health-decision.ts); the runtime commits it (functions/runtime/run-commit.ts). Every assessment
 * is written: its healthSummary.checkedAt drives the relay's health timer.
 */
export function createHealthRun(deps: HealthRecordDeps): LoopRun<AnySlice> {
  const now = deps.now ?? (() => new Date());
  return {
    async decide(message: QueueMessage, ctx: RecordContext): Promise<Decided<AnySlice>> {
      const hinted = hintedRelease(deps.hintKey, message, ctx.receiveCount, now());
      const release = hinted?.release ?? (await loadRelease(deps.releases, message, ctx));
      if (!('metadata' in release)) return release;
      const observation = await observeHealth(release, deps, ctx.logger, hinted?.hint);
      return healthDecision(release, observation, now());
    },
    commit: releaseCommitPorts('health', deps),
  };
}

/** The health run without a Lease: decides and commits at once (tests, benchmarks). */
export function createHealthRecordHandler(deps: HealthRecordDeps): RecordHandler {
  return committing('health', createHealthRun(deps));
}

async function observeHealth(
  release: Release,
  deps: HealthRecordDeps,
  log: Logger,
  hint?: NonNullable<QueueMessage['applied']>,
): Promise<HealthObservation> {
  const renderRef = healthRenderRef(release);
  if (renderRef === undefined) return { kind: 'notAssessed' };
  if (hint !== undefined && hint.renderRef === renderRef) {
    // Right after the apply: assessed from the apply's own answers (applied-hint.ts).
    const render = hintedRender(hint) ?? (await loadRender(deps.renders, release, renderRef));
    if (render.kind === 'loaded' && render.objects.length === hint.live.length) {
      return {
        kind: 'assessed',
        renderRef,
        objects: render.objects.map((object, i) => ({ object, live: hint.live[i] })),
      };
    }
  }
  try {
    const target = await deps.targets.resolve(release);
    const render = await loadRender(deps.renders, release, renderRef);
    if (render.kind === 'unavailable')
      return { kind: 'renderUnavailable', renderRef, message: render.message };
    // Kinds whose health is their existence need no more than their metadata (domain/health/existence-only.ts).
    const checked = new Set(
      (release.spec.healthAssessment?.checks ?? []).map((check) => `${check.apiVersion} ${check.kind}`),
    );
    const live = await target.readAll(render.objects, {
      metadataOnly: (obj) => !checked.has(`${obj.apiVersion} ${obj.kind}`) && healthIsExistence(obj, []),
    });
    return {
      kind: 'assessed',
      renderRef,
      objects: render.objects.map((object, i) => ({ object, live: live[i] })),
    };
  } catch (error) {
    if (error instanceof ClusterResolutionError || error instanceof ObserverRequestError) {
      log.warn('the target cluster could not be read', { error });
      return { kind: 'clusterNotReady', renderRef, message: error.message };
    }
    throw error;
  }
}
