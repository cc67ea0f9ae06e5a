/**
 * What the rollout step machine (advance-rollout.ts) reads off the members of a step — ready,
 * failed, in flight, pending, held — and the child writes it makes of them.
 */
import type { ReleaseSetStatus, Revision } from '../api/release-set.ts';
import type { EventIntent } from '../status/release-events.ts';
import type { Member } from './generate-fleet.ts';
import { FleetAnnotation } from './labels.ts';
import { hasRollbackPin, isApplied, withRollbackPin, type ChildWrite } from './writes.ts';

export type Sorted = {
  ready: Member[];
  failed: Member[];
  inFlight: Member[];
  pending: Member[];
  held: Member[];
};

export function sortMembers(members: readonly Member[]): Sorted {
  const out: Sorted = { ready: [], failed: [], inFlight: [], pending: [], held: [] };
  for (const m of members) {
    const s = m.state;
    if (s.kind === 'held') out.held.push(m);
    else if (s.kind === 'missing' || s.kind === 'outdated') out.pending.push(m);
    else if (s.verdict.ready) out.ready.push(m);
    else if (s.verdict.kind === 'failure') out.failed.push(m);
    else out.inFlight.push(m);
  }
  return out;
}

export const names = (members: readonly Member[], max = 10): string => {
  const shown = members.slice(0, max).map((m) => m.cluster.name);
  return members.length > max ? `${shown.join(', ')} and ${members.length - max} more` : shown.join(', ');
};

export const event = (type: 'Normal' | 'Warning', reason: string, note: string): EventIntent => ({
  type,
  reason,
  action: 'Rollout',
  note,
});

/**
 * An apply of a Cluster's child: create, update to the revision, or restore a child at the revision
 * that differs from what the set would write now: edited by hand, or its Cluster's annotations or
 * labels changed what `${cluster.…}` gives (same revision; docs/fleet.md "The model").
 */
export function applyWrite(m: Member): ChildWrite | undefined {
  const s = m.state;
  if (s.kind === 'missing')
    return { action: 'apply', name: m.name, cluster: m.cluster.name, why: 'create', release: m.desired };
  if (s.kind === 'outdated')
    return { action: 'apply', name: m.name, cluster: m.cluster.name, why: 'update', release: m.desired };
  if (s.kind === 'updated' && !isApplied(m.desired, s.release))
    return { action: 'apply', name: m.name, cluster: m.cluster.name, why: 'restore', release: m.desired };
  return undefined;
}

export const writesFor = (members: readonly Member[]): ChildWrite[] =>
  members.map(applyWrite).filter((w): w is ChildWrite => w !== undefined);

/** Children of this rollout back to `target`: those that recorded being at it before this revision. */
export function rollbackWrites(
  members: readonly Member[],
  target: Revision,
): { writes: ChildWrite[]; pinned: number; notPossible: Member[] } {
  const writes: ChildWrite[] = [];
  const notPossible: Member[] = [];
  let pinned = 0;
  for (const m of members) {
    if (m.state.kind !== 'updated') continue;
    const annotations = m.state.release.metadata.annotations ?? {};
    if (annotations[FleetAnnotation.previousRevision] !== target.id) {
      notPossible.push(m);
      continue;
    }
    if (hasRollbackPin(m.state.release)) {
      pinned++;
      continue;
    }
    const renderRef = annotations[FleetAnnotation.previousRender];
    const release = renderRef === undefined ? m.desired : withRollbackPin(m.desired, renderRef);
    writes.push({
      action: 'rollback',
      name: m.name,
      cluster: m.cluster.name,
      toRevision: target,
      renderRef,
      release,
    });
  }
  return { writes, pinned, notPossible };
}

export const frozen = (
  previous: ReleaseSetStatus | undefined,
): Pick<ReleaseSetStatus, 'failing' | 'failingOmitted'> => ({
  failing: previous?.failing ?? [],
  failingOmitted: previous?.failingOmitted ?? 0,
});

export function succeededMessage(revision: Revision, clusters: number): string {
  return `revision ${revision.id} is rolled out: every step succeeded (${clusters} Clusters selected)`;
}
