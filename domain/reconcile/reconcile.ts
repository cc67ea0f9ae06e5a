import type { Release } from '../api/index.ts';
import { resolveRetentionPolicy } from '../store/retention.ts';
import { describeObject, type KubeObject } from '../render/kube-object.ts';
import { Annotation, annotationOf, isNewRequest } from './annotations.ts';
import { conclude, concludeProgress, type ReconcileDecision, type ReconcileEnd } from './conclude.ts';
import { createProgressTracker, type ProgressTracker } from './progress.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import { checkedByItsApply } from './checked-by-apply.ts';
import type { DryRunVerdict, ReconcilePorts, TargetCluster } from './ports.ts';
import { prepareRender, type PinState, type Resolved } from './prepare-render.ts';
import { planWaves } from '../render/order.ts';
import { pruneRemoved } from './prune.ts';
import { rollOut } from './rollout.ts';
import { rollBack } from './rollback.ts';
import { clusterWaveGate } from './cluster-waves.ts';
import { runHooks } from './hooks.ts';
import { errorMessage, isTerminal, isUnreachable } from './stops.ts';

/** The render as the run's applies and dry runs answered it: what the observers check first after an apply. */
export interface AppliedObservation {
  renderRef: string;
  objects: readonly KubeObject[];
  /** In render order: the live object as answered. */
  live: readonly Record<string, unknown>[];
}

export type ReconcileResult =
  | ({ kind: 'reconciled'; renderRef?: string; warnings: string[]; observed?: AppliedObservation } & ReconcileDecision)
  | { kind: 'suspended' };

/**
 * One reconcile of a Release: a ladder of steps, each of which may end it at a
 * row of the spec's "Where a reconcile can stop" table. Returns the status
 * slice for convoy-release and the Outcome; it writes nothing itself.
 */
export async function reconcile(release: Release, ports: ReconcilePorts): Promise<ReconcileResult> {
  if (release.spec.suspend) return { kind: 'suspended' };
  const now = ports.now();
  const status = release.status;
  const resolved: Resolved = {};
  const pin: { state?: PinState } = {};
  const warnings: string[] = [];
  const forceRequest = annotationOf(release, Annotation.forceSyncRequestedAt);
  const forced = isNewRequest(forceRequest, status?.lastHandledForceSyncAt);
  const base: ReconcileEnd = {
    release,
    now,
    resolved,
    retention: resolveRetentionPolicy(release.spec.retentionPolicy, ports.retentionDefault),
    ...(forced && forceRequest !== undefined ? { handledForceSyncAt: forceRequest } : {}),
  };
  const finish = (end: Partial<ReconcileEnd>): ReconcileResult => ({
    kind: 'reconciled',
    ...(resolved.renderRef ? { renderRef: resolved.renderRef } : {}),
    warnings,
    ...conclude({ ...base, ...(pin.state ? { pinState: pin.state } : {}), ...end }),
  });

  const prepared = await prepareRender(release, ports, resolved, pin);
  if (isHalt(prepared)) return finish({ halt: prepared });
  const { target, objects, renderRef } = prepared;
  const tracker = progressTracker(release, ports, now, resolved, objects.length);

  // Manual sync mode: a changed render waits for a /sync request.
  const manual = release.spec.syncPolicy.mode === 'Manual';
  const syncRequest = annotationOf(release, Annotation.syncRequestedAt);
  const syncRequested = manual && isNewRequest(syncRequest, status?.lastHandledSyncAt);
  const inFlight = status?.rollout?.renderRef === renderRef && status.rollout.state === 'Progressing';
  if (manual && !syncRequested && !forced && !inFlight) {
    if (status?.lastSuccessful?.renderRef === renderRef) {
      return finish({ upToDateMessage: `manual sync mode: the render ${renderRef} is the one last applied` });
    }
    return finish({
      halt: halt('waitingForSync', `manual sync mode: render ${renderRef} differs from the last applied render; POST …/sync to apply it`),
    });
  }

  // Cluster waves: a new render waits for the Releases of lower waves on the same Cluster.
  // Wave 0 (the default, and the lowest) never waits, so it never lists its namespace.
  if (release.spec.clusterWave > 0 && !inFlight && status?.lastSuccessful?.renderRef !== renderRef) {
    const others = await attempt(
      () => ports.releases.inNamespace(release.metadata.namespace ?? 'default'),
      (e) => halt('applyFailed', `listing the Releases of the namespace for cluster waves failed: ${errorMessage(e)}`, e),
    );
    if (isHalt(others)) return finish({ halt: others });
    const gate = clusterWaveGate(release, others, now);
    if (gate !== undefined) return finish({ halt: gate });
  }

  // Dry run every object first; a rejection applies nothing. A force sync skips it, and so does
  // a Progressing rollout of this render whose waves are all applied: it applies nothing more
  // (rollout.ts applies a wave once per rollout), so a dry run would decide nothing (issue 13).
  // The first object of a first deploy is checked by its own apply instead (checked-by-apply.ts).
  const verdicts = new Map<KubeObject, DryRunVerdict>();
  const checked = checkedByItsApply(release, objects, forced);
  if (!forced && !(inFlight && everyWaveApplied(release, objects))) {
    const dryRunOf = objects.filter((obj) => obj !== checked);
    const dryRun = await attempt(
      () => (dryRunOf.length === 0 ? Promise.resolve([]) : target.dryRun(dryRunOf, tracker && ((checked) => tracker.update({ checked })))),
      (e) => dryRunStop(e, `dry run: ${errorMessage(e)}`),
    );
    if (isHalt(dryRun)) return finish({ halt: dryRun });
    dryRunOf.forEach((obj, i) => verdicts.set(obj, dryRun[i] ?? { kind: 'changed' }));
  }

  // The render is stored before anything is applied: drift, health, pins and rollback read it.
  const store = ports.store;
  if (store !== undefined && !prepared.pinned) {
    const stored = await attempt(
      () =>
        store.put(release, {
          renderRef,
          objects,
          resolvedSource: resolved.source,
          resolvedCluster: resolved.cluster,
          resolvedMutations: resolved.mutations,
        }),
      (e) => halt('storeWriteFailed', `writing render ${renderRef} to the render store failed: ${errorMessage(e)}`, e),
    );
    if (isHalt(stored)) return finish({ halt: stored });
  }

  // Lifecycle hooks: PreSync Jobs complete before the first wave of a new rollout.
  const hooks = await attempt(
    () => ports.lifecycle.hooksOf(release),
    (e) => halt('renderFailed', `spec.lifecycleRef: ${errorMessage(e)}`, e),
  );
  if (isHalt(hooks)) return finish({ halt: hooks });
  let hookStatus = status?.lifecycle?.hooks ?? [];
  const rolloutOpen = !(status?.rollout?.renderRef === renderRef && status.rollout.state !== 'Progressing') || forced;
  if (hooks.length > 0 && rolloutOpen) {
    const pre = await runHooks(release, target, hooks, 'PreSync', renderRef, hookStatus, now);
    hookStatus = pre.hooks;
    if (pre.halt) return finish({ halt: pre.halt, lifecycle: { hooks, status: hookStatus } });
  }

  if (checked !== undefined) {
    const first = await attempt(
      () => target.apply(checked),
      (e) => dryRunStop(e, `${errorMessage(e)}; nothing was applied`),
    );
    if (isHalt(first)) return finish({ halt: first });
    verdicts.set(checked, { kind: 'appliedAhead' });
  }

  await tracker?.update({ checked: objects.length });
  const rolled = await rollOut(release, target, objects, verdicts, renderRef, now, forced, tracker && { handled: (applied) => tracker.update({ applied }) });
  if (rolled.progress.rollout.state === 'Failed' && release.spec.failurePolicy?.rollback === 'OnWaveFailure') {
    const reason = rolled.kind === 'halted' ? rolled.halt.message : `the last wave of ${renderRef} was not healthy within waveTimeout`;
    const back = await rollBack(release, ports, target, { renderRef, objects, progress: rolled.progress, reason }, now);
    if (back !== undefined) return finish({ halt: back, progress: rolled.progress });
  }
  if (rolled.kind === 'halted') return finish({ halt: rolled.halt, progress: rolled.progress });

  const pruned = await pruneRemoved(release, ports, target, objects, renderRef);
  if (isHalt(pruned)) return finish({ halt: pruned, progress: rolled.progress });
  if (pruned.skipped > 0) warnings.push(`${pruned.skipped} removed objects were not pruned (not applied by convoy, or prune: disabled)`);

  if (hooks.length > 0) {
    const post = await runHooks(release, target, hooks, 'PostSync', renderRef, hookStatus, now);
    hookStatus = post.hooks;
    if (post.halt) return finish({ halt: post.halt, progress: rolled.progress, lifecycle: { hooks, status: hookStatus } });
  }

  const decision = finish({
    progress: rolled.progress,
    ...(hooks.length > 0 ? { lifecycle: { hooks, status: hookStatus } } : {}),
    ...(syncRequested && syncRequest !== undefined ? { handledSyncAt: syncRequest } : {}),
  });
  // Retention runs when this run brought a render the Release had attempted none like before:
  // only a new render adds to the store, so an unchanged reconcile (interval ticks, rollout
  // rechecks) costs the store nothing, and neither does a Release's first render (it is the only
  // one; renders left by an earlier Release of the same name go at its next new render) (issue 13).
  // maxAge is thus enforced at the next new render (docs/decisions.md).
  const previousAttempt = status?.lastAttempted?.renderRef;
  if (store !== undefined && decision.kind === 'reconciled' && previousAttempt !== undefined && renderRef !== previousAttempt) {
    warnings.push(...(await applyRetention(release, ports, decision)));
  }
  if (decision.kind === 'reconciled' && decision.notify.length > 0) {
    const observed = await observedAfterApply(target, objects, renderRef);
    if (observed !== undefined) return { ...decision, observed };
  }
  return decision;
}

/** The run's progress tracker (progress.ts), when the runtime takes progress writes. */
function progressTracker(release: Release, ports: ReconcilePorts, now: Date, resolved: Resolved, total: number): ProgressTracker | undefined {
  const progress = ports.progress;
  if (progress === undefined) return undefined;
  return createProgressTracker({
    policy: progress.policy,
    clock: () => ports.now().getTime(),
    startedAtMs: now.getTime(),
    total,
    write: (counts) => progress.write(concludeProgress({ release, now, resolved }, counts, ports.now())),
  });
}

/** How a refused check of the render ends the run, before anything was applied: the dry run's stop. */
function dryRunStop(error: unknown, message: string): Halt {
  return halt(isTerminal(error) ? 'dryRunRejected' : isUnreachable(error) ? 'clusterNotReady' : 'applyFailed', message, error);
}

/** Every wave of the render has been applied in the rollout in progress (none is Pending). */
function everyWaveApplied(release: Release, objects: readonly KubeObject[]): boolean {
  const waves = release.status?.waves ?? [];
  return planWaves(objects).every((w) => {
    const entry = waves.find((e) => e.wave === w.wave);
    return entry !== undefined && entry.state !== 'Pending';
  });
}

/**
 * The most objects an observation is made for. It travels to drift and health in a queue message
 * (SQS: 256 KiB), and a live object as the API server answers it (metadata, managedFields) takes
 * well over 200 bytes: more objects never fit, and sealing and measuring a hint of 10,000 objects
 * only to drop it cost the large-render run seconds and tens of MB (bench largeRelease). Without
 * it the observers read the render from the store, as after any tick.
 */
export const MAX_OBSERVED_OBJECTS = 1_000;

/** Every object of the render as this run's own answers have it, or undefined when one is missing. */
async function observedAfterApply(target: TargetCluster, objects: readonly KubeObject[], renderRef: string): Promise<AppliedObservation | undefined> {
  if (target.answered === undefined || objects.length > MAX_OBSERVED_OBJECTS) return undefined;
  const answered = target.answered.bind(target);
  const live = await Promise.all(objects.map((obj) => answered(obj).catch(() => undefined)));
  if (live.some((l) => l === undefined)) return undefined;
  return { renderRef, objects, live: live as Record<string, unknown>[] };
}

async function applyRetention(release: Release, ports: ReconcilePorts, decision: ReconcileDecision): Promise<string[]> {
  const s = decision.slice;
  const protectedRefs = new Set(
    [s.lastSuccessful?.renderRef, s.lastHealthy?.renderRef, s.rollout?.renderRef, s.rollout?.previousRenderRef, s.pin?.renderRef].filter(
      (r): r is string => r !== undefined,
    ),
  );
  try {
    await ports.store?.prune(release, protectedRefs, s.resolvedRetentionPolicy ?? ports.retentionDefault);
    return [];
  } catch (error) {
    // Retention is housekeeping: a failure must not fail the sync, but it is reported.
    return [`render store retention failed: ${errorMessage(error)}`];
  }
}

export { describeObject };
