import type { HookStatus, LifecycleHook, Release } from '../api/index.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import { runHooks } from './hooks.ts';
import type { ReconcilePorts } from './ports.ts';
import type { SyncRun } from './run.ts';
import { errorMessage } from './stops.ts';

/** The hooks of spec.lifecycleRef and their status entries as the run has them (ReconcileEnd.lifecycle). */
export interface LifecycleRun {
  hooks: readonly LifecycleHook[];
  status: HookStatus[];
}

/** A hooks step that ran: the entries after it, and where the run stops, if it does. */
export interface HookStep {
  lifecycle: LifecycleRun;
  halt?: Halt;
}

/**
 * The hooks of spec.lifecycleRef ([] without one), with the status entries the last run left. A
 * Lifecycle that cannot be read stops the run at "Render or mutate: error" (renderFailed, retried).
 */
export async function loadHooks(release: Release, ports: ReconcilePorts): Promise<LifecycleRun | Halt> {
  const hooks = await attempt(
    () => ports.lifecycle.hooksOf(release),
    (e) => halt('renderFailed', `spec.lifecycleRef: ${errorMessage(e)}`, e),
  );
  if (isHalt(hooks)) return hooks;
  return { hooks, status: release.status?.lifecycle?.hooks ?? [] };
}

/**
 * Step "preSync hook": PreSync Jobs complete before the first wave of a new rollout (rows
 * "preSync hook: running", WaitingForHook, and "… failed", HookFailed). They do not run again
 * for a rollout of this render that already finished, unless a force sync restarts it.
 */
export async function runPreSyncHooks(run: SyncRun, lifecycle: LifecycleRun): Promise<HookStep> {
  const rollout = run.release.status?.rollout;
  const rolloutOpen =
    !(rollout?.renderRef === run.renderRef && rollout.state !== 'Progressing') || run.forced;
  if (lifecycle.hooks.length === 0 || !rolloutOpen) return { lifecycle };
  return hookPhase(run, lifecycle, 'PreSync');
}

/**
 * Step "Start postSync hooks": after the apply, PostSync Jobs are started and not awaited
 * (LifecycleSucceeded reports them); a failure to start one stops at postSyncStartFailed (retried).
 */
export async function startPostSyncHooks(run: SyncRun, lifecycle: LifecycleRun): Promise<HookStep> {
  if (lifecycle.hooks.length === 0) return { lifecycle };
  return hookPhase(run, lifecycle, 'PostSync');
}

async function hookPhase(
  run: SyncRun,
  lifecycle: LifecycleRun,
  phase: LifecycleHook['phase'],
): Promise<HookStep> {
  const ran = await runHooks(
    run.release,
    run.target,
    lifecycle.hooks,
    phase,
    run.renderRef,
    lifecycle.status,
    run.now,
  );
  const next = { hooks: lifecycle.hooks, status: ran.hooks };
  return ran.halt === undefined ? { lifecycle: next } : { lifecycle: next, halt: ran.halt };
}
