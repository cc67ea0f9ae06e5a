/**
 * The per-ReleaseSet gauges, in the Prometheus text exposition format 0.0.4, written
 * from the relay's ReleaseSet index at scrape time like release-gauges.ts: one series per set and
 * count or state, never per Cluster, so their number grows with the sets, not the fleet.
 *
 * - convoy_releaseset_clusters{namespace,set,state}: status.clusters (selected, updated, ready,
 *   waiting, failed);
 * - convoy_releaseset_rollout_state{namespace,set,state}: 1 for status.rollout.state;
 * - convoy_releaseset_rollout_step{namespace,set,step}: the index of the current step, named;
 * - convoy_releaseset_observed{namespace,set}: 1 when status.observedGeneration is the set's
 *   generation (the fleet function handled the current spec), else 0.
 *
 * They name each set, so /metrics (no token) serves them only with CONVOY_METRICS_PER_RELEASE;
 * renderReleaseSetCounts (no names) is always served.
 */
import { escapeLabelValue } from './release-gauges.ts';

/** What the gauges read of a ReleaseSet (the relay's slim copy, watch/slim.ts). */
export interface GaugedReleaseSet {
  readonly metadata?:
    | {
        readonly name?: string | undefined;
        readonly namespace?: string | undefined;
        readonly generation?: number | undefined;
      }
    | undefined;
  readonly status?:
    | {
        readonly observedGeneration?: number | undefined;
        readonly rollout?:
          | {
              readonly state?: string | undefined;
              readonly step?: number | undefined;
              readonly stepName?: string | undefined;
            }
          | undefined;
        readonly clusters?: Readonly<Record<string, number | undefined>> | undefined;
      }
    | undefined;
}

const CLUSTER_STATES = ['selected', 'updated', 'ready', 'waiting', 'failed'] as const;

const FAMILIES = {
  clusters: {
    name: 'convoy_releaseset_clusters',
    help: 'Clusters of each ReleaseSet by state (status.clusters: selected, updated, ready, waiting, failed).',
  },
  rollout: {
    name: 'convoy_releaseset_rollout_state',
    help: 'The rollout state of each ReleaseSet (status.rollout.state): 1 for the current state.',
  },
  step: {
    name: 'convoy_releaseset_rollout_step',
    help: 'The index of the current step of each ReleaseSet rollout (status.rollout.step), labelled with its name.',
  },
  observed: {
    name: 'convoy_releaseset_observed',
    help: '1 when the fleet function has handled the current spec of the ReleaseSet (status.observedGeneration = metadata.generation), else 0.',
  },
} as const;

const header = (f: { name: string; help: string }): string =>
  `# HELP ${f.name} ${f.help}\n# TYPE ${f.name} gauge\n`;

export function renderReleaseSetGauges(sets: Iterable<GaugedReleaseSet>): string {
  const clusters: string[] = [];
  const rollout: string[] = [];
  const step: string[] = [];
  const observed: string[] = [];
  for (const set of sets) {
    const id = `namespace="${escapeLabelValue(set.metadata?.namespace ?? '')}",set="${escapeLabelValue(set.metadata?.name ?? '')}"`;
    const status = set.status;
    const counts = status?.clusters;
    if (counts !== undefined) {
      for (const state of CLUSTER_STATES)
        clusters.push(`${FAMILIES.clusters.name}{${id},state="${state}"} ${counts[state] ?? 0}`);
    }
    const current = status?.rollout;
    if (current?.state !== undefined)
      rollout.push(`${FAMILIES.rollout.name}{${id},state="${escapeLabelValue(current.state)}"} 1`);
    if (current?.step !== undefined)
      step.push(
        `${FAMILIES.step.name}{${id},step="${escapeLabelValue(current.stepName ?? '')}"} ${current.step}`,
      );
    const generation = set.metadata?.generation;
    observed.push(
      `${FAMILIES.observed.name}{${id}} ${generation !== undefined && status?.observedGeneration === generation ? 1 : 0}`,
    );
  }
  const family = (f: { name: string; help: string }, lines: readonly string[]): string =>
    header(f) + (lines.length > 0 ? `${lines.join('\n')}\n` : '');
  return (
    family(FAMILIES.clusters, clusters) +
    family(FAMILIES.rollout, rollout) +
    family(FAMILIES.step, step) +
    family(FAMILIES.observed, observed)
  );
}

const COUNT_FAMILIES = {
  rollout: {
    name: 'convoy_releasesets_by_rollout_state',
    help: 'ReleaseSets by rollout state (status.rollout.state). Names no ReleaseSet.',
  },
  unobserved: {
    name: 'convoy_releasesets_unobserved',
    help: 'ReleaseSets whose current spec the fleet function has not handled yet (status.observedGeneration behind metadata.generation). Names no ReleaseSet.',
  },
} as const;

/** The families that count ReleaseSets without naming one. */
export function renderReleaseSetCounts(sets: Iterable<GaugedReleaseSet>): string {
  const rollouts = new Map<string, number>();
  let unobserved = 0;
  for (const set of sets) {
    const state = set.status?.rollout?.state;
    if (state !== undefined) rollouts.set(state, (rollouts.get(state) ?? 0) + 1);
    const generation = set.metadata?.generation;
    if (generation === undefined || set.status?.observedGeneration !== generation) unobserved++;
  }
  const lines = [...rollouts]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([state, n]) => `${COUNT_FAMILIES.rollout.name}{state="${escapeLabelValue(state)}"} ${n}\n`);
  return (
    header(COUNT_FAMILIES.rollout) +
    lines.join('') +
    `${header(COUNT_FAMILIES.unobserved)}${COUNT_FAMILIES.unobserved.name} ${unobserved}\n`
  );
}
