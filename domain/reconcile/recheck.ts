/**
 * The 10-s recheck of a Progressing rollout is a look at the wave it waits on, not
 * a full reconcile: while that wave is not healthy (and within its waveTimeout) nothing changed
 * that the reconcile would act on, so the recheck reads the wave's objects — workloads first, and
 * none whose health is its existence (the wave's apply made those healthy) — until the first
 * that is not healthy, and ends with the same recheck, writing only this attempt's
 * time into the status the last reconcile left (lastAttempted.attemptedAt, reconciledAt).
 *
 * Anything else is the full reconcile's (this returns undefined): the wave turned healthy (the
 * reconcile of the same run then builds on what the recheck read — `seen`, `withSeenReads` — applies
 * the next wave, finishes the rollout and writes status), it timed out, the spec changed (generation), a /sync, force-sync or
 * pin request is waiting, the render cannot be loaded, or the cluster cannot be reached.
 */
import type { Release } from '../api/index.ts';
import { targetNamespaceOf } from '../api/objects.ts';
import { assessObject, compileChecks, healthIsExistence } from '../health/index.ts';
import { objectKey } from '../render/identity.ts';
import { apiGroup, describeObject, type KubeObject } from '../render/kube-object.ts';
import { planWaves } from '../render/order.ts';
import { requeueAfter, type Outcome } from '../runtime/outcome.ts';
import { AppliedReason, ConditionType } from '../status/reasons.ts';
import { toRfc3339 } from '../status/conditions.ts';
import type { ReleaseSlice } from '../status/slices.ts';
import { Annotation, annotationOf, hasUnansweredSyncRequest, isNewRequest } from './annotations.ts';
import { durationMs } from './durations.ts';
import type { ReconcilePorts } from './ports.ts';
import { sliceAsFound } from './slice-as-found.ts';
import { ROLLOUT_RECHECK_MS } from './stops.ts';

/** Why the Release is a plain wait on a wave's health, or undefined when the full reconcile must run. */
export function waitingWave(release: Release, now: Date): { renderRef: string; wave: number } | undefined {
  const status = release.status;
  const rollout = status?.rollout;
  if (release.spec.suspend || rollout?.state !== 'Progressing') return undefined;
  if (rollout.renderRef !== status?.lastAttempted?.renderRef) return undefined;
  if ((release.metadata.generation ?? 0) !== status.observedGeneration) return undefined;
  const applied = status.conditions?.find((c) => c.type === ConditionType.Applied);
  if (applied?.reason !== AppliedReason.Applied && applied?.reason !== AppliedReason.WaitingForWaveHealth)
    return undefined;
  if (hasUnansweredSyncRequest(release)) return undefined;
  if (isNewRequest(annotationOf(release, Annotation.forceSyncRequestedAt), status.lastHandledForceSyncAt))
    return undefined;
  if (annotationOf(release, Annotation.pin) !== status.pin?.renderRef) return undefined;
  const entry = (status.waves ?? []).find((w) => w.state !== 'Healthy');
  if (entry?.state !== 'Applied' || entry.appliedAt === undefined) return undefined;
  const waveTimeoutMs = durationMs(release.spec.syncPolicy.waveTimeout, 5 * 60_000);
  if (now.getTime() - Date.parse(entry.appliedAt) > waveTimeoutMs) return undefined;
  return { renderRef: rollout.renderRef, wave: entry.wave };
}

/**
 * The status of a recheck that found the wave still waiting: as the last reconcile left it, with
 * this attempt's time (status-and-conditions.txt: lastAttempted is written at each reconcile,
 * also when it waits).
 */
export function recheckSlice(release: Release, now: Date): ReleaseSlice {
  const at = toRfc3339(now);
  const found = sliceAsFound(release.status);
  return {
    ...found,
    reconciledAt: at,
    lastAttempted:
      found.lastAttempted === undefined ? undefined : { ...found.lastAttempted, attemptedAt: at },
  };
}

/** Workloads first (they are what a wave waits for), then other kinds with a health rule, then the rest. */
function readOrder(obj: KubeObject): number {
  const group = apiGroup(obj.apiVersion);
  if (
    group === 'apps' ||
    group === 'extensions' ||
    (group === 'batch' && obj.kind === 'Job') ||
    (group === '' && obj.kind === 'Pod')
  )
    return 0;
  if (
    ['Service', 'PersistentVolumeClaim', 'Ingress', 'CustomResourceDefinition', 'APIService'].includes(
      obj.kind,
    )
  )
    return 1;
  return 2;
}

/** Live objects a recheck read, by objectKey (its Release's default namespace). */
export type SeenReads = Map<string, Record<string, unknown>>;

/**
 * The cluster port of the full reconcile that follows a recheck in the same run: a read of an
 * object the recheck has just read answers with that read instead of another GET (the wave that
 * turned healthy is read once, not twice). Everything else goes to the cluster as usual.
 */
export function withSeenReads(
  cluster: ReconcilePorts['cluster'],
  release: Release,
  seen: SeenReads,
): ReconcilePorts['cluster'] {
  if (seen.size === 0) return cluster;
  const ns = targetNamespaceOf(release);
  return {
    async resolve(r) {
      const target = await cluster.resolve(r);
      const read = target.read.bind(target);
      const unused = new Map(seen);
      // Each seen read serves once: a second read in the run (after an apply) asks the cluster.
      return Object.assign(Object.create(target) as typeof target, {
        async read(obj: KubeObject) {
          const key = objectKey(obj, ns);
          const live = unused.get(key);
          if (live === undefined) return read(obj);
          unused.delete(key);
          return live;
        },
      });
    },
  };
}

/**
 * The recheck's Outcome while the wave it waits on is still not healthy; undefined: run the
 * full reconcile (`seen`, when given, then holds what the recheck read). Never throws: a failure
 * to read is the full reconcile's to report.
 */
export async function recheckWaitingWave(
  release: Release,
  ports: Pick<ReconcilePorts, 'now' | 'store' | 'cluster'>,
  seen?: SeenReads,
): Promise<{ outcome: Outcome; slice: ReleaseSlice } | undefined> {
  const now = ports.now();
  const waiting = waitingWave(release, now);
  if (waiting === undefined || ports.store === undefined) return undefined;
  try {
    const render = await ports.store.get(release, waiting.renderRef);
    if (render === undefined) return undefined;
    const wave = planWaves(render.objects).find((w) => w.wave === waiting.wave);
    if (wave === undefined) return undefined;
    const target = await ports.cluster.resolve(release);
    const checks = compileChecks(release.spec.healthAssessment?.checks ?? []).compiled;
    // Objects whose health is their existence were made healthy by the wave's apply in this
    // rollout: not read again (health/existence-only.ts).
    const ordered = wave.objects
      .map((obj, i) => ({ obj, i }))
      .filter(({ obj }) => !healthIsExistence(obj, checks))
      .sort((a, b) => readOrder(a.obj) - readOrder(b.obj) || a.i - b.i);
    const ns = targetNamespaceOf(release);
    for (const { obj } of ordered) {
      const live = await target.read(obj);
      if (live !== undefined) seen?.set(objectKey(obj, ns), live);
      const health = assessObject(live, { checks, now });
      if (health.state !== 'Healthy') {
        return {
          outcome: requeueAfter(
            ROLLOUT_RECHECK_MS,
            `rollout Progressing: wave ${waiting.wave} waits for ${describeObject(obj)} (${health.state})`,
          ),
          slice: recheckSlice(release, now),
        };
      }
    }
    return undefined;
  } catch {
    // The full reconcile reads again and reports what failed with its reason.
    return undefined;
  }
}
