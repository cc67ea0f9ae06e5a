import type { Release } from '../../domain/api/objects.ts';
import { objectDrift, type DriftObservation } from '../../domain/observe/drift-diff.ts';
import { driftMemoryBasis, driftMemoryKey, type DriftMemory } from '../../domain/observe/drift-memory.ts';
import {
  inSyncVerdict,
  observeSlice,
  planDriftCheck,
  type DriftCheck,
} from '../../domain/observe/insync-verdict.ts';
import { loadRender, type LoadedRender } from '../../domain/observe/load-render.ts';
import { jsonEqual } from '../../domain/render/kube-object.ts';
import type { Outcome } from '../../domain/runtime/outcome.ts';
import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import type { Decided } from '../../domain/runtime/run-decision.ts';
import { findCondition } from '../../domain/status/conditions.ts';
import { ConditionType } from '../../domain/status/reasons.ts';
import type { AnySlice } from '../../domain/status/slices.ts';
import type { RenderStore } from '../../domain/store/render-store.ts';
import { ClusterResolutionError } from '../../adapters/kube/cluster-resolver.ts';
import { ObserverRequestError, type ObserverTargetResolver } from '../../adapters/kube/observer-target.ts';
import type { ReleaseSource } from '../../adapters/kube/release-source.ts';
import type { StatusWriter } from '../../adapters/kube/status-writer.ts';
import type { EventRecorder } from '../../adapters/kube/events.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RecordContext, RecordHandler } from '../runtime/sqs-batch-handler.ts';
import { hintedRelease, hintedRender, type HintKey } from '../runtime/applied-hint.ts';
import type { Notifier } from '../runtime/notifier.ts';
import { loadRelease } from '../runtime/release-reads.ts';
import { committing, releaseCommitPorts, type LoopRun } from '../runtime/run-commit.ts';
import { driftDecision } from './drift-decision.ts';

export interface DriftRecordDeps {
  releases: ReleaseSource;
  statusWriter: StatusWriter;
  targets: ObserverTargetResolver;
  /** undefined: no render store is configured (InSync stays Pending and says so). */
  renders: RenderStore | undefined;
  notify: Notifier;
  now?: () => Date;
  /** The functions' hint key (functions/runtime/clients.ts): a hint is used only under its seal; undefined: none is used. */
  hintKey?: HintKey | undefined;
  /** Events about the Release (DriftDetected, DriftResolved); undefined: none. */
  events?: EventRecorder | undefined;
  /**
   * The container's memory of clean checks (domain/observe/drift-memory.ts): an object whose
   * resourceVersion is the one of its last clean check is read metadata-only instead of dry-run.
   * undefined: every check dry-runs every object.
   */
  memory?: DriftMemory | undefined;
}

/**
 * The drift loop's run: loads the Release a message names, compares its applied render with the
 * target cluster and decides the convoy-observe slice (InSync only), unless InSync would not
 * change, and a request to the reconcile queue for a drifted Release in mode Correct
 * (drift-decision.ts); the runtime commits that (functions/runtime/run-commit.ts).
 */
export function createDriftRun(deps: DriftRecordDeps): LoopRun<AnySlice> {
  const now = deps.now ?? (() => new Date());
  return {
    async decide(message: QueueMessage, ctx: RecordContext): Promise<Decided<AnySlice>> {
      const hinted = hintedRelease(deps.hintKey, message, ctx.receiveCount, now());
      const release = hinted?.release ?? (await loadRelease(deps.releases, message, ctx));
      if (!('metadata' in release)) return release;
      return driftDecision(release, await checkDrift(release, deps, ctx.logger, hinted?.hint), now());
    },
    commit: releaseCommitPorts('drift', deps),
  };
}

/** The drift run without a Lease: decides and commits at once (tests, benchmarks). */
export function createDriftRecordHandler(deps: DriftRecordDeps): RecordHandler {
  return committing('drift', createDriftRun(deps));
}

/**
 * Ends a message before the Lease (functions/runtime/release-reads.ts, `withoutLease`) when its
 * sealed hint alone decides the run and the run changes nothing: the check made from the
 * reconcile's answers (no request) leaves InSync exactly as the hinted Release has it, and asks
 * for no correction — so there is no status write, no Event and no message, and the Lease's take
 * and give-back would be the run's only requests. The usual case when the observers' interval
 * checks ride on a settled reconcile (domain/status/observer-ticks.ts). Anything else:
 * undefined, and the run goes on under the Lease, from the same hint.
 */
export function createDriftWithoutLease(deps: Pick<DriftRecordDeps, 'hintKey' | 'now'>) {
  const now = deps.now ?? (() => new Date());
  return (message: QueueMessage, ctx: RecordContext): Promise<Outcome | undefined> =>
    Promise.resolve(endsWithoutLease(message, ctx));
  function endsWithoutLease(message: QueueMessage, ctx: RecordContext): Outcome | undefined {
    const hinted = hintedRelease(deps.hintKey, message, ctx.receiveCount, now());
    if (hinted === undefined) return undefined;
    const { release, hint } = hinted;
    const plan = planDriftCheck(release);
    const render = hintedRender(hint);
    if (plan.kind === 'pending' || render === undefined || hint.renderRef !== plan.renderRef)
      return undefined;
    const verdict = inSyncVerdict(release, hintedCheck(release, render));
    if (verdict.correct) return undefined;
    const unchanged = jsonEqual(
      findCondition(release.status?.conditions, ConditionType.InSync),
      observeSlice(release, verdict, now()).conditions[0],
    );
    if (!unchanged) return undefined;
    ctx.logger.child({ renderRef: render.renderRef }).info('drift checked', {
      inSync: verdict.condition.reason,
      drifted: verdict.drifted,
      corrected: false,
      lease: "not taken: the reconcile's sealed answers leave InSync as it is",
    });
    return verdict.outcome;
  }
}

/** The check of objects as the reconcile's answers show them (applied-hint.ts): each is what the apply or dry run just found. */
function hintedCheck(release: Release, render: Extract<LoadedRender, { kind: 'loaded' }>): DriftCheck {
  const ignore = release.spec.driftDetection.ignore ?? [];
  return {
    kind: 'checked',
    renderRef: render.renderRef,
    objects: render.objects.map((object) => ({
      object,
      drift: objectDrift(object, { kind: 'unchanged' }, ignore),
    })),
  };
}

async function checkDrift(
  release: Release,
  deps: DriftRecordDeps,
  log: Logger,
  hint?: NonNullable<QueueMessage['applied']>,
): Promise<DriftCheck> {
  const plan = planDriftCheck(release);
  if (plan.kind === 'pending') return plan;
  if (hint !== undefined && hint.renderRef === plan.renderRef) {
    // Right after the apply: the objects are as the apply just left them (applied-hint.ts).
    const render = hintedRender(hint) ?? (await loadRender(deps.renders, release, plan.renderRef));
    if (render.kind === 'loaded' && render.objects.length === hint.live.length)
      return hintedCheck(release, render);
  }
  try {
    const target = await deps.targets.resolve(release);
    const render = await loadRender(deps.renders, release, plan.renderRef);
    if (render.kind === 'unavailable')
      return { kind: 'renderUnavailable', renderRef: render.renderRef, message: render.message };
    const ignore = release.spec.driftDetection.ignore ?? [];
    const memory = deps.memory;
    const basis = driftMemoryBasis(render.renderRef, ignore);
    const keyOf = (object: Parameters<typeof driftMemoryKey>[1]): string =>
      driftMemoryKey(target.identity, object);
    const observations = await target.observeDriftAll(
      render.objects,
      memory === undefined ? undefined : (object) => memory.cleanVersion(keyOf(object), basis),
    );
    return {
      kind: 'checked',
      renderRef: render.renderRef,
      objects: render.objects.map((object, i) => {
        const observation: DriftObservation = observations[i] ?? { kind: 'absent' };
        const drift = objectDrift(object, observation, ignore);
        if (memory !== undefined) {
          const rv =
            observation.kind === 'unchanged' || observation.kind === 'compared'
              ? observation.resourceVersion
              : undefined;
          // Only a clean check is remembered; anything else is checked in full next time.
          if (drift.state === 'InSync' && rv !== undefined) memory.remember(keyOf(object), basis, rv);
          else memory.forget(keyOf(object));
        }
        return { object, drift };
      }),
    };
  } catch (error) {
    if (error instanceof ClusterResolutionError || error instanceof ObserverRequestError) {
      log.warn('the target cluster could not be read', { error });
      return { kind: 'clusterNotReady', message: error.message };
    }
    throw error;
  }
}
