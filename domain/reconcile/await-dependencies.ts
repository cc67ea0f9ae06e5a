import { decideDependencies } from '../dependencies/decide.ts';
import { memoReads } from '../dependencies/reads.ts';
import { findCondition } from '../status/conditions.ts';
import { ConditionType } from '../status/reasons.ts';
import { durationMs } from './durations.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { SyncRun } from './run.ts';
import { errorMessage } from './stops.ts';

/**
 * Step "Dependencies": a new render waits until every spec.dependsOn meets its condition (rows
 * "Dependencies: …" of the stop table; domain/dependencies/decide.ts decides). A rollout already
 * under way and the render last applied never wait, but a cycle is reported whatever the render.
 */
export async function awaitDependencies(run: SyncRun): Promise<Halt | undefined> {
  const { release, renderRef } = run;
  if ((release.spec.dependsOn ?? []).length === 0) return undefined;
  const reads = run.ports.dependencies;
  if (reads === undefined)
    return halt(
      'applyFailed',
      'spec.dependsOn is set, but this runtime was given no reader for dependencies',
    );
  const policy = release.spec.dependencyPolicy;
  const decision = await attempt(
    () =>
      decideDependencies({
        release,
        reads: memoReads(reads),
        now: run.now,
        newRender: !run.inFlight && release.status?.lastSuccessful?.renderRef !== renderRef,
        applied: findCondition(release.status?.conditions, ConditionType.Applied),
        timeoutMs: policy?.timeout === undefined ? undefined : durationMs(policy.timeout, 0),
      }),
    (e) => halt('applyFailed', `reading the dependencies of spec.dependsOn failed: ${errorMessage(e)}`, e),
  );
  if (isHalt(decision)) return decision;
  return decision.kind === 'met' ? undefined : halt(decision.stop, decision.message);
}
