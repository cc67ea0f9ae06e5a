/**
 * The parts of a ReleaseSet status counted from the children: clusters, releaseConditions,
 * steps, failing and held. Every list is capped, so the status stays small at any fleet size
 * (test/unit/fleet/status-size.test.ts: under 64 KiB at 5,000 Clusters).
 */
import type { FailingCluster, ReleaseSetStatus } from '../api/release-set.ts';
import { failingEntry, failingList, MAX_FAILING } from './failing.ts';
import type { Member } from './generate-fleet.ts';
import type { RolloutOutcome } from './advance-rollout.ts';
import type { StepPlan } from './steps.ts';

type Counts = NonNullable<ReleaseSetStatus['clusters']>;
type ConditionCounts = NonNullable<ReleaseSetStatus['releaseConditions']>;
type StepStatus = NonNullable<ReleaseSetStatus['steps']>[number];

const COUNTED = ['Applied', 'InSync', 'Healthy', 'RolloutSucceeded'] as const;

export function clusterCounts(members: readonly Member[]): Counts {
  let updated = 0;
  let ready = 0;
  let failed = 0;
  for (const m of members) {
    if (m.state.kind !== 'updated') continue;
    updated++;
    if (m.state.verdict.ready) ready++;
    else if (m.state.verdict.kind === 'failure') failed++;
  }
  return { selected: members.length, updated, ready, waiting: members.length - ready - failed, failed };
}

export function releaseConditionCounts(members: readonly Member[]): ConditionCounts {
  const out = Object.fromEntries(
    COUNTED.map((t) => [t, { True: 0, False: 0, Unknown: 0 }]),
  ) as ConditionCounts;
  for (const m of members) {
    if (m.state.kind === 'missing') continue;
    for (const c of m.state.release.status?.conditions ?? []) {
      if ((COUNTED as readonly string[]).includes(c.type))
        out[c.type as (typeof COUNTED)[number]][c.status]++;
    }
  }
  return out;
}

export function stepStatuses(
  steps: readonly StepPlan[],
  members: readonly Member[],
  outcome: RolloutOutcome,
): StepStatus[] {
  const current = outcome.rollout.step;
  return steps.map((step, k) => {
    const counts = clusterCounts(members.filter((m) => m.step === k));
    const finishedAt = outcome.finishedAt[k];
    return {
      name: step.name,
      clusters: counts.selected,
      updated: counts.updated,
      ready: counts.ready,
      failed: counts.failed,
      state: stepState(k, current, outcome),
      ...(finishedAt === undefined ? {} : { finishedAt }),
    };
  });
}

function stepState(k: number, current: number, outcome: RolloutOutcome): StepStatus['state'] {
  const state = outcome.rollout.state;
  if (state === 'Succeeded' || k < current) return 'Succeeded';
  if (k > current) return 'Pending';
  if (state === 'Halted' || state === 'RolledBack') return 'Failed';
  if (state === 'WaitingForApproval') return 'WaitingForApproval';
  if (outcome.stop === 'waitingForMinHealthyTime') return 'Soaking';
  if (state === 'Paused' && outcome.rollout.stepStartedAt === undefined) return 'Pending';
  return 'Progressing';
}

/** The failing Clusters as the children show them now, in step order then by name. */
export function failingNow(members: readonly Member[], now: Date): FailingCluster[] {
  const out: FailingCluster[] = [];
  for (const m of members) {
    if (m.state.kind !== 'updated' || m.state.verdict.ready || m.state.verdict.kind !== 'failure') continue;
    out.push(
      failingEntry({ cluster: m.cluster.name, release: m.state.release, verdict: m.state.verdict, now }),
    );
  }
  return out;
}

export function failingFields(
  entries: readonly FailingCluster[],
): Pick<ReleaseSetStatus, 'failing' | 'failingOmitted'> {
  const { failing, failingOmitted } = failingList(entries);
  return { failing, failingOmitted };
}

export function heldFields(members: readonly Member[]): Pick<ReleaseSetStatus, 'held' | 'heldOmitted'> {
  const held = members.flatMap((m) =>
    m.state.kind === 'held' ? [{ cluster: m.cluster.name, release: m.name, reason: m.state.reason }] : [],
  );
  return { held: held.slice(0, MAX_FAILING), heldOmitted: Math.max(0, held.length - MAX_FAILING) };
}
