import { targetNamespaceOf } from '../api/objects.ts';
import type { HookStatus, LifecycleHook, Release } from '../api/index.ts';
import { RELEASE_ANNOTATION } from '../render/annotations.ts';
import type { KubeObject } from '../render/kube-object.ts';
import { toRfc3339 } from '../status/conditions.ts';
import { durationMs } from './durations.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { TargetCluster } from './ports.ts';
import { errorMessage } from './stops.ts';

export type HookPhase = LifecycleHook['phase'];

/** A hook Job is named <release>-<hook>-<first 6 hex of renderRef>: it runs once per render. */
export function hookJobName(release: Release, hook: LifecycleHook, renderRef: string): string {
  const hex = renderRef.replace(/^sha256:/, '').slice(0, 6);
  return `${release.metadata.name}-${hook.name}-${hex}`.slice(0, 63).replace(/-+$/, '');
}

export function hookJob(release: Release, hook: LifecycleHook, renderRef: string): KubeObject {
  const template = structuredClone(hook.job.template) as { spec?: { restartPolicy?: string } };
  template.spec ??= {};
  template.spec.restartPolicy ??= 'Never';
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: hookJobName(release, hook, renderRef),
      namespace: targetNamespaceOf(release),
      labels: { 'convoy.dev/hook': hook.name, 'convoy.dev/hook-phase': hook.phase },
      annotations: {
        [RELEASE_ANNOTATION]: `${release.metadata.namespace ?? 'default'}/${release.metadata.name}`,
      },
    },
    spec: {
      backoffLimit: hook.job.backoffLimit,
      activeDeadlineSeconds: Math.max(1, Math.ceil(durationMs(hook.timeout, 600_000) / 1000)),
      template,
    },
  };
}

type JobState = 'Running' | 'Succeeded' | 'Failed';

function jobState(live: Record<string, unknown> | undefined): { state: JobState; message?: string } {
  const conditions =
    (live?.['status'] as { conditions?: { type: string; status: string; message?: string }[] } | undefined)
      ?.conditions ?? [];
  const complete = conditions.find(
    (c) => (c.type === 'Complete' || c.type === 'SuccessCriteriaMet') && c.status === 'True',
  );
  if (complete) return { state: 'Succeeded' };
  const failed = conditions.find(
    (c) => (c.type === 'Failed' || c.type === 'FailureTarget') && c.status === 'True',
  );
  if (failed) return { state: 'Failed', message: failed.message ?? 'the Job failed' };
  return { state: 'Running' };
}

export interface HookRun {
  /** The hook entries of status.lifecycle for this render (other phases kept). */
  hooks: HookStatus[];
  /** undefined: the phase is done (or has no hooks); else why the reconcile stops here. */
  halt?: Halt;
}

/**
 * Runs the hooks of one phase for a render: starts each hook's Job once, then
 * reads its state. PreSync waits for every hook (WaitingForHook); a failed
 * hook with onFailure Fail stops the sync (HookFailed). PostSync hooks are
 * started and not awaited: LifecycleSucceeded reports them.
 */
export async function runHooks(
  release: Release,
  target: TargetCluster,
  hooks: readonly LifecycleHook[],
  phase: HookPhase,
  renderRef: string,
  previous: readonly HookStatus[],
  now: Date,
): Promise<HookRun> {
  const stamp = toRfc3339(now);
  const out: HookStatus[] = previous.filter((h) => !(h.phase === phase && h.renderRef === renderRef));
  let waiting: string[] = [];
  for (const hook of hooks.filter((h) => h.phase === phase)) {
    const job = hookJob(release, hook, renderRef);
    const before = previous.find(
      (h) => h.name === hook.name && h.phase === phase && h.renderRef === renderRef,
    );
    const live = await attempt(
      () => target.read(job),
      (e) =>
        halt(
          phase === 'PreSync' ? 'applyFailed' : 'postSyncStartFailed',
          `reading hook Job ${job.metadata.name} failed: ${errorMessage(e)}`,
          e,
        ),
    );
    if (isHalt(live)) return { hooks: out, halt: live };
    if (live === undefined && before?.state !== 'Succeeded' && before?.state !== 'Failed') {
      const started = await attempt(
        () => target.apply(job),
        (e) =>
          halt(
            phase === 'PreSync' ? 'applyFailed' : 'postSyncStartFailed',
            `starting ${phase} hook ${hook.name} (Job ${job.metadata.name}) failed: ${errorMessage(e)}`,
            e,
          ),
      );
      if (isHalt(started)) return { hooks: out, halt: started };
    }
    const { state, message } =
      live === undefined
        ? {
            state:
              before?.state === 'Failed'
                ? ('Failed' as const)
                : before?.state === 'Succeeded'
                  ? ('Succeeded' as const)
                  : ('Running' as const),
            message: before?.message,
          }
        : jobState(live);
    const entry: HookStatus = {
      name: hook.name,
      phase,
      renderRef,
      state,
      job: job.metadata.name,
      startedAt: before?.startedAt ?? stamp,
      ...(state !== 'Running' ? { finishedAt: before?.finishedAt ?? stamp } : {}),
      ...(message ? { message: message.slice(0, 1024) } : {}),
    };
    out.push(entry);
    if (state === 'Failed' && hook.onFailure === 'Fail') {
      const failure = halt(
        'hookFailed',
        `${phase} hook ${hook.name} failed (Job ${job.metadata.name}): ${message ?? 'failed'}`,
      );
      return { hooks: out, halt: { ...failure, hook: { name: hook.name, phase } } };
    }
    if (state === 'Running') waiting = [...waiting, hook.name];
  }
  if (phase === 'PreSync' && waiting.length > 0) {
    return {
      hooks: out,
      halt: halt('waitingForHook', `waiting for PreSync hooks to complete: ${waiting.join(', ')}`),
    };
  }
  return { hooks: out };
}
