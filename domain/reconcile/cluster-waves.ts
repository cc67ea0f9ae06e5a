import type { Release } from '../api/index.ts';
import { findCondition } from '../status/conditions.ts';
import { AppliedReason, ConditionType } from '../status/reasons.ts';
import { combinedVerdict } from '../status/verdict.ts';
import { durationMs } from './durations.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { SyncRun } from './run.ts';
import { errorMessage } from './stops.ts';

/**
 * Step "Cluster wave": a new render waits for the Releases of lower waves on the same Cluster
 * (rows "Cluster wave: wait" and "… timeout"). Wave 0 (the default, and the lowest) never
 * waits, so it never lists its namespace; neither does a rollout already under way, nor the
 * render last applied.
 */
export async function awaitClusterWaves(run: SyncRun): Promise<Halt | undefined> {
  const { release, renderRef } = run;
  if (
    release.spec.clusterWave <= 0 ||
    run.inFlight ||
    release.status?.lastSuccessful?.renderRef === renderRef
  )
    return undefined;
  const others = await attempt(
    () => run.ports.releases.inNamespace(release.metadata.namespace ?? 'default'),
    (e) =>
      halt(
        'applyFailed',
        `listing the Releases of the namespace for cluster waves failed: ${errorMessage(e)}`,
        e,
      ),
  );
  if (isHalt(others)) return others;
  return clusterWaveGate(release, others, run.now);
}

/**
 * Cluster waves: a Release waits until every Release of a lower
 * spec.clusterWave on the same Cluster (same namespace) is Ready by the
 * combined verdict. The wait starts when Applied turned WaitingForClusterWave,
 * so its message must not change while waiting (no names in it).
 */
export function clusterWaveGate(release: Release, others: readonly Release[], now: Date): Halt | undefined {
  const wave = release.spec.clusterWave;
  const cluster = release.spec.cluster.name;
  const lower = others.filter(
    (r) =>
      r.metadata.name !== release.metadata.name &&
      r.spec.cluster.name === cluster &&
      r.spec.clusterWave < wave &&
      !r.metadata.deletionTimestamp,
  );
  const waitingFor = lower.filter((r) => !combinedVerdict(r).ready);
  if (waitingFor.length === 0) return undefined;

  const applied = findCondition(release.status?.conditions, ConditionType.Applied);
  const since =
    applied?.reason === AppliedReason.WaitingForClusterWave
      ? Date.parse(applied.lastTransitionTime)
      : now.getTime();
  const timeoutMs = durationMs(release.spec.syncPolicy.clusterWaveTimeout, 30 * 60_000);
  const message = `cluster wave ${wave} on Cluster ${cluster} waits for the Releases of lower cluster waves to be ready`;
  if (now.getTime() - since > timeoutMs) {
    const names = waitingFor
      .slice(0, 10)
      .map((r) => `${r.metadata.name} (wave ${r.spec.clusterWave}: ${combinedVerdict(r).message})`);
    return halt(
      'clusterWaveTimedOut',
      `lower cluster waves were not ready within clusterWaveTimeout ${release.spec.syncPolicy.clusterWaveTimeout}: ${names.join('; ')}`,
    );
  }
  return halt('waitingForClusterWave', message);
}
