import type { Release } from '../api/index.ts';
import type { KubeObject } from '../render/kube-object.ts';
import { planWaves } from '../render/order.ts';
import { checkedByItsApply } from './checked-by-apply.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { DryRunVerdict, TargetCluster } from './ports.ts';
import type { SyncRun } from './run.ts';
import { errorMessage, isTerminal, isUnreachable } from './stops.ts';

/** What the dry run found, for the apply: objects it found unchanged are not written. */
export interface DryRunChecks {
  verdicts: Map<KubeObject, DryRunVerdict>;
  /** The object whose own apply is its check (checked-by-apply.ts): `applyCheckedByApply` applies it first. */
  checkedByApply: KubeObject | undefined;
}

/**
 * Step "Dry run": every object is dry-run first, and a rejection applies nothing (row "Dry run:
 * rejected", Unappliable). A force sync skips it, and so does a Progressing rollout of this render
 * whose waves are all applied: it applies nothing more (rollout.ts applies a wave once per
 * rollout), so a dry run would decide nothing. The first object of a first deploy is
 * checked by its own apply instead (checked-by-apply.ts).
 */
export async function dryRunRender(run: SyncRun): Promise<DryRunChecks | Halt> {
  const { release, objects, forced, tracker } = run;
  const verdicts = new Map<KubeObject, DryRunVerdict>();
  const checked = checkedByItsApply(release, objects, forced);
  if (!forced && !(run.inFlight && everyWaveApplied(release, objects))) {
    const dryRunOf = objects.filter((obj) => obj !== checked);
    const dryRun = await attempt(
      () =>
        dryRunOf.length === 0
          ? Promise.resolve([])
          : run.target.dryRun(dryRunOf, tracker && ((checked) => tracker.update({ checked }))),
      (e) => dryRunStop(e, `dry run: ${errorMessage(e)}`),
    );
    if (isHalt(dryRun)) return dryRun;
    dryRunOf.forEach((obj, i) => verdicts.set(obj, dryRun[i] ?? { kind: 'changed' }));
  }
  return { verdicts, checkedByApply: checked };
}

/**
 * The rest of the step "Dry run", once the PreSync hooks are done: the object checked by its own
 * apply is applied, and its refusal ends the run as a refused dry run would (nothing else applied).
 */
export async function applyCheckedByApply(
  target: TargetCluster,
  checks: DryRunChecks,
): Promise<Halt | undefined> {
  const checked = checks.checkedByApply;
  if (checked === undefined) return undefined;
  const first = await attempt(
    () => target.apply(checked),
    (e) => dryRunStop(e, `${errorMessage(e)}; nothing was applied`),
  );
  if (isHalt(first)) return first;
  checks.verdicts.set(checked, { kind: 'appliedAhead' });
  return undefined;
}

/** How a refused check of the render ends the run, before anything was applied: the dry run's stop. */
function dryRunStop(error: unknown, message: string): Halt {
  return halt(
    isTerminal(error) ? 'dryRunRejected' : isUnreachable(error) ? 'clusterNotReady' : 'applyFailed',
    message,
    error,
  );
}

/** Every wave of the render has been applied in the rollout in progress (none is Pending). */
function everyWaveApplied(release: Release, objects: readonly KubeObject[]): boolean {
  const waves = release.status?.waves ?? [];
  return planWaves(objects).every((w) => {
    const entry = waves.find((e) => e.wave === w.wave);
    return entry !== undefined && entry.state !== 'Pending';
  });
}
