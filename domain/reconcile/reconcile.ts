import type { Release } from '../api/index.ts';
import { describeObject } from '../render/kube-object.ts';
import { applyRender } from './apply-render.ts';
import { awaitClusterWaves } from './cluster-waves.ts';
import { awaitDependencies } from './await-dependencies.ts';
import type { ReconcileEnd } from './reconcile-end.ts';
import { applyCheckedByApply, dryRunRender } from './dry-run.ts';
import { isHalt } from './halt.ts';
import { loadHooks, runPreSyncHooks, startPostSyncHooks } from './hook-steps.ts';
import { checkManualSync } from './manual-sync.ts';
import { withObservation } from './observed.ts';
import type { ReconcilePorts } from './ports.ts';
import { prepareRender } from './prepare-render.ts';
import { pruneRemoved } from './prune.ts';
import { retainRenders, storeRender } from './render-store.ts';
import { beginRun, finishRun, syncRunOf, type ReconcileResult } from './run.ts';

export type { AppliedObservation } from './observed.ts';
export { MAX_OBSERVED_OBJECTS } from './observed.ts';
export type { ReconcileResult } from './run.ts';

/**
 * One reconcile of a Release: a ladder of steps, each of which may end it at a row of the
 * spec's "Where a reconcile can stop" table (README.md maps each row to its step). Returns the
 * status slice for convoy-release and the Outcome; it writes nothing itself.
 */
export async function reconcile(release: Release, ports: ReconcilePorts): Promise<ReconcileResult> {
  if (release.spec.suspend) return { kind: 'suspended' };
  const run = beginRun(release, ports);
  const finish = (end: Partial<ReconcileEnd>) => finishRun(run, end);

  const prepared = await prepareRender(release, ports, run.resolved, run.pin);
  if (isHalt(prepared)) return finish({ halt: prepared });
  const sync = syncRunOf(run, prepared);

  const manual = checkManualSync(sync);
  if ('wait' in manual) return finish(manual.wait);
  const dependencies = await awaitDependencies(sync);
  if (dependencies !== undefined) return finish({ halt: dependencies });
  const clusterWave = await awaitClusterWaves(sync);
  if (clusterWave !== undefined) return finish({ halt: clusterWave });
  const checks = await dryRunRender(sync);
  if (isHalt(checks)) return finish({ halt: checks });
  const stored = await storeRender(sync, prepared.pinned, run.resolved);
  if (stored !== undefined) return finish({ halt: stored });
  const hooks = await loadHooks(release, ports);
  if (isHalt(hooks)) return finish({ halt: hooks });
  const pre = await runPreSyncHooks(sync, hooks);
  if (pre.halt !== undefined) return finish({ halt: pre.halt, lifecycle: pre.lifecycle });
  const ahead = await applyCheckedByApply(sync.target, checks);
  if (ahead !== undefined) return finish({ halt: ahead });

  await sync.tracker?.update({ checked: sync.objects.length });
  const { progress, halt } = await applyRender(sync, checks.verdicts);
  if (halt !== undefined) return finish({ halt, progress });
  const pruned = await pruneRemoved(release, ports, sync.target, sync.objects, sync.renderRef);
  if (isHalt(pruned)) return finish({ halt: pruned, progress });
  if (pruned.skipped > 0)
    run.warnings.push(
      `${pruned.skipped} removed objects were not pruned (not applied by convoy, or prune: disabled)`,
    );
  const post = await startPostSyncHooks(sync, pre.lifecycle);
  if (post.halt !== undefined) return finish({ halt: post.halt, progress, lifecycle: post.lifecycle });

  // All steps done.
  const decision = finish({
    progress,
    ...(hooks.hooks.length > 0 ? { lifecycle: post.lifecycle } : {}),
    ...(manual.handledSyncAt !== undefined ? { handledSyncAt: manual.handledSyncAt } : {}),
  });
  run.warnings.push(...(await retainRenders(release, ports, sync.renderRef, decision.slice)));
  return withObservation(decision, sync);
}

export { describeObject };
