import type { Release, ReleaseStatus, WaveStatus } from '../api/index.ts';
import { assessObject, compileChecks, healthIsExistence, type ObjectHealth } from '../health/index.ts';
import { describeObject, type KubeObject } from '../render/kube-object.ts';
import { kindRank, planWaves, type Wave } from '../render/order.ts';
import { toRfc3339 } from '../status/conditions.ts';
import { durationMs } from './durations.ts';
import { eachBounded } from './bounded.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { DryRunVerdict, TargetCluster } from './ports.ts';
import { errorMessage } from './stops.ts';

export type Rollout = NonNullable<ReleaseStatus['rollout']>;

export interface RolloutProgress {
  rollout: Rollout;
  waves: WaveStatus[];
  /** Objects written this run (the others were unchanged). */
  written: number;
}

export type RolloutResult =
  /** Every wave is applied; the rollout may still be Progressing (last wave not healthy yet). */
  | { kind: 'applied'; progress: RolloutProgress }
  /** Stopped at a wave: waiting for health, timed out, or an apply failed. */
  | { kind: 'halted'; progress: RolloutProgress; halt: Halt };

const MAX_UNHEALTHY_NAMED = 5;

/**
 * Applies in flight at once, among objects of the same kind rank of a wave (Namespaces and CRDs
 * still land before what lives in them: kind ranks go one after the other). One by one, a
 * 10,000-object render spent most of its run waiting on round trips (bench largeRelease); the
 * dry run already checked 8 at once.
 */
export const APPLY_CONCURRENCY = 8;

/** How the apply step reports how far it has come (progress.ts); called after each object. */
export interface ApplyObserver {
  /** `handled`: objects of the render this run has applied or left unchanged so far. */
  handled(handled: number): Promise<void>;
}

/**
 * Applies the render wave by wave. A wave's objects that the dry run found
 * unchanged are not written. Before the next wave, the previous one must be
 * healthy; progress survives between runs in status.rollout and status.waves,
 * so each run resumes where the last one stopped.
 */
export async function rollOut(
  release: Release,
  target: TargetCluster,
  objects: readonly KubeObject[],
  verdicts: ReadonlyMap<KubeObject, DryRunVerdict>,
  renderRef: string,
  now: Date,
  restart: boolean,
  observer?: ApplyObserver,
): Promise<RolloutResult> {
  const status = release.status;
  const counter = handledCounter(observer);
  const stamp = toRfc3339(now);
  const existing = status?.rollout?.renderRef === renderRef ? status.rollout : undefined;
  const planned = planWaves(objects);
  if (existing !== undefined && existing.state !== 'Progressing' && !restart) {
    return reapplyFinished(release, target, planned, verdicts, existing, status?.waves ?? [], counter);
  }
  const continuing = existing !== undefined && !restart;
  const previousRef = status?.lastSuccessful?.renderRef;
  const rollout: Rollout = continuing
    ? { ...existing }
    : {
        renderRef,
        ...(previousRef !== undefined && previousRef !== renderRef ? { previousRenderRef: previousRef } : {}),
        state: 'Progressing',
        startedAt: stamp,
      };
  const previousWaves = continuing ? (status?.waves ?? []) : [];
  const waves: WaveStatus[] = planned.map((w) => ({
    ...(previousWaves.find((p) => p.wave === w.wave) ?? {
      wave: w.wave,
      objects: w.objects.length,
      state: 'Pending',
    }),
  }));
  const progress: RolloutProgress = { rollout, waves, written: 0 };
  const checks = compileChecks(release.spec.healthAssessment?.checks ?? []).compiled;
  const waveTimeoutMs = durationMs(release.spec.syncPolicy.waveTimeout, 5 * 60_000);

  for (const [index, wave] of planned.entries()) {
    const entry = waves[index];
    rollout.wave = wave.wave;
    // A wave is applied once per rollout. A recheck of a Progressing rollout does not apply its
    // applied waves again: a change made to them since is drift, which the drift loop reports
    // (and corrects in mode Correct); re-applying here would hide it (docs/decisions.md).
    if (entry.state === 'Pending') {
      const written = await applyWave(target, wave, verdicts, counter);
      if (isHalt(written)) return { kind: 'halted', progress, halt: written };
      progress.written += written;
      entry.state = 'Applied';
      entry.appliedAt = stamp;
    } else {
      await counter.add(wave.objects.length);
    }
    if (entry.state === 'Healthy') continue;

    const health = await waveHealth(target, wave.objects, checks, now);
    if (isHalt(health)) return { kind: 'halted', progress, halt: health };
    if (health.unhealthy.length === 0) {
      entry.state = 'Healthy';
      entry.healthyAt = stamp;
      continue;
    }
    const isLast = index === planned.length - 1;
    const waitedMs = now.getTime() - Date.parse(entry.appliedAt ?? stamp);
    if (waitedMs > waveTimeoutMs) {
      entry.state = 'TimedOut';
      rollout.state = 'Failed';
      rollout.finishedAt = stamp;
      if (isLast) return { kind: 'applied', progress };
      return waveFailed(
        release,
        progress,
        `wave ${wave.wave} was not healthy within waveTimeout ${release.spec.syncPolicy.waveTimeout}: ${health.unhealthy.join('; ')}`,
      );
    }
    if (isLast) return { kind: 'applied', progress };
    return {
      kind: 'halted',
      progress,
      halt: halt(
        'waitingForWaveHealth',
        `wave ${planned[index + 1].wave} waits for wave ${wave.wave} to be healthy: ${health.unhealthy.join('; ')}`,
      ),
    };
  }
  rollout.state = 'Succeeded';
  rollout.finishedAt ??= stamp;
  return { kind: 'applied', progress };
}

async function waveHealth(
  target: TargetCluster,
  objects: readonly KubeObject[],
  checks: ReturnType<typeof compileChecks>['compiled'],
  now: Date,
): Promise<{ unhealthy: string[] } | Halt> {
  // The wave was applied in this rollout: an object whose health is its existence is healthy
  // by that apply, and is not read again (health/existence-only.ts).
  const watched = objects.filter((obj) => !healthIsExistence(obj, checks));
  const verdicts = await attempt(
    () =>
      Promise.all(
        watched.map(async (obj) => [obj, assessObject(await target.read(obj), { checks, now })] as const),
      ),
    (e) => halt('applyFailed', `reading the wave's objects failed: ${errorMessage(e)}`, e),
  );
  if (isHalt(verdicts)) return verdicts;
  const unhealthy = verdicts.filter(([, h]) => h.state !== 'Healthy');
  const named = unhealthy.slice(0, MAX_UNHEALTHY_NAMED).map(([obj, h]) => describeHealth(obj, h));
  if (unhealthy.length > MAX_UNHEALTHY_NAMED)
    named.push(`and ${unhealthy.length - MAX_UNHEALTHY_NAMED} more`);
  return { unhealthy: named };
}

function describeHealth(obj: KubeObject, health: ObjectHealth): string {
  return `${describeObject(obj)} is ${health.state}${health.message ? ` (${health.message})` : ''}`;
}

/**
 * The render's rollout already finished. Succeeded: re-apply what drifted, in
 * wave order, without waiting again. Failed: stays failed until the render
 * changes or a force sync restarts it.
 */
async function reapplyFinished(
  release: Release,
  target: TargetCluster,
  planned: readonly Wave[],
  verdicts: ReadonlyMap<KubeObject, DryRunVerdict>,
  rollout: Rollout,
  waves: readonly WaveStatus[],
  counter: HandledCounter,
): Promise<RolloutResult> {
  const progress: RolloutProgress = {
    rollout: { ...rollout },
    waves: waves.map((w) => ({ ...w })),
    written: 0,
  };
  const timedOut = waves.find((w) => w.state === 'TimedOut');
  const lastWave = planned.at(-1)?.wave;
  if (rollout.state === 'RolledBack') {
    return {
      kind: 'halted',
      progress,
      halt: halt(
        'rolledBack',
        `the rollout of ${rollout.renderRef} failed and was rolled back; change the Release or request a force sync to try again`,
      ),
    };
  }
  if (rollout.state === 'Failed' && timedOut !== undefined && timedOut.wave !== lastWave) {
    return waveFailed(
      release,
      progress,
      `the rollout of ${rollout.renderRef} failed: wave ${timedOut.wave} was not healthy within waveTimeout; change the Release or request a force sync to try again`,
    );
  }
  for (const wave of planned) {
    const written = await applyWave(target, wave, verdicts, counter);
    if (isHalt(written)) return { kind: 'halted', progress, halt: written };
    progress.written += written;
  }
  return { kind: 'applied', progress };
}

/** Counts handled objects across the waves of one run and tells the observer. */
interface HandledCounter {
  add(n: number): Promise<void>;
}

function handledCounter(observer: ApplyObserver | undefined): HandledCounter {
  let handled = 0;
  return {
    async add(n) {
      handled += n;
      if (observer !== undefined) await observer.handled(handled);
    },
  };
}

/** The wave's objects in runs of one kind rank, in apply order. */
function byKindRank(objects: readonly KubeObject[]): KubeObject[][] {
  const runs: KubeObject[][] = [];
  let rank: number | undefined;
  for (const obj of objects) {
    const r = kindRank(obj);
    if (r !== rank || runs.length === 0) runs.push([]);
    rank = r;
    runs[runs.length - 1]?.push(obj);
  }
  return runs;
}

/**
 * Applies the objects of one wave that the dry run found changed (or could not check); returns
 * how many. Objects of one kind rank are applied APPLY_CONCURRENCY at a time, the ranks in order.
 */
async function applyWave(
  target: TargetCluster,
  wave: Wave,
  verdicts: ReadonlyMap<KubeObject, DryRunVerdict>,
  counter: HandledCounter,
): Promise<number | Halt> {
  let written = 0;
  for (const run of byKindRank(wave.objects)) {
    const stopped = await eachBounded(run, APPLY_CONCURRENCY, async (obj) => {
      const verdict = verdicts.get(obj)?.kind;
      if (verdict !== 'unchanged' && verdict !== 'appliedAhead') {
        const applied = await attempt(
          () => target.apply(obj),
          (e) =>
            halt(
              'applyFailed',
              `apply of ${describeObject(obj)} in wave ${wave.wave} failed: ${errorMessage(e)}`,
              e,
            ),
        );
        if (isHalt(applied)) return applied;
      }
      if (verdict !== 'unchanged') written++;
      await counter.add(1);
      return undefined;
    });
    if (stopped !== undefined) return stopped;
  }
  return written;
}

/** A wave timed out: WaveFailed without a failurePolicy, RolloutFailed with one. */
function waveFailed(release: Release, progress: RolloutProgress, message: string): RolloutResult {
  return {
    kind: 'halted',
    progress,
    halt: halt(release.spec.failurePolicy ? 'rolloutFailed' : 'waveTimedOut', message),
  };
}
