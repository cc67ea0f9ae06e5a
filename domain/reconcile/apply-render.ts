import type { KubeObject } from '../render/kube-object.ts';
import type { Halt } from './halt.ts';
import type { DryRunVerdict } from './ports.ts';
import { rollBack } from './rollback.ts';
import { rollOut, type RolloutProgress } from './rollout.ts';
import type { SyncRun } from './run.ts';

/** The apply step's result: the rollout as far as it got, and where the run stops, if it does. */
export interface AppliedRender {
  progress: RolloutProgress;
  halt?: Halt;
}

/**
 * Step "Apply": the render wave by wave (rollout.ts; rows "Apply a wave: error", "Sync wave:
 * wait for the previous wave", "Sync wave: timeout"). A rollout that failed with
 * failurePolicy.rollback OnWaveFailure applies the last healthy render again (rollback.ts: RolledBack).
 */
export async function applyRender(
  run: SyncRun,
  verdicts: ReadonlyMap<KubeObject, DryRunVerdict>,
): Promise<AppliedRender> {
  const { release, ports, target, objects, renderRef, now, tracker } = run;
  const rolled = await rollOut(
    release,
    target,
    objects,
    verdicts,
    renderRef,
    now,
    run.forced,
    tracker && { handled: (applied) => tracker.update({ applied }) },
  );
  if (
    rolled.progress.rollout.state === 'Failed' &&
    release.spec.failurePolicy?.rollback === 'OnWaveFailure'
  ) {
    const reason =
      rolled.kind === 'halted'
        ? rolled.halt.message
        : `the last wave of ${renderRef} was not healthy within waveTimeout`;
    const back = await rollBack(
      release,
      ports,
      target,
      { renderRef, objects, progress: rolled.progress, reason },
      now,
    );
    if (back !== undefined) return { halt: back, progress: rolled.progress };
  }
  if (rolled.kind === 'halted') return { halt: rolled.halt, progress: rolled.progress };
  return { progress: rolled.progress };
}
