/**
 * What the set sees of one selected Cluster's child: missing, held by its user (pinned,
 * suspended), at another revision, or at the current revision with its combined verdict
 * (domain/status/verdict.ts): ready, failing or still on its way.
 */
import type { Condition } from '../api/common.ts';
import type { Release } from '../api/objects.ts';
import { combinedVerdict, type Verdict } from '../status/verdict.ts';
import { FleetAnnotation, FleetLabel } from './labels.ts';

export type ChildState =
  | { readonly kind: 'missing' }
  | {
      readonly kind: 'held';
      readonly release: Release;
      readonly reason: 'PinnedByUser' | 'Suspended';
      readonly message: string;
    }
  | { readonly kind: 'outdated'; readonly release: Release }
  | { readonly kind: 'updated'; readonly release: Release; readonly verdict: Verdict };

const PIN = 'convoy.dev/pin';

interface OwnerRef {
  uid?: unknown;
  controller?: unknown;
}

function ownerReferences(release: Release): OwnerRef[] {
  const refs = (release.metadata as { ownerReferences?: unknown }).ownerReferences;
  return Array.isArray(refs) ? (refs as OwnerRef[]) : [];
}

/**
 * Whether the Release is this set's child: owned by its uid, or labelled with its name and owned
 * by no controller (a child whose owner reference was lost is adopted; a user's own Release is not).
 */
export function isChildOf(release: Release, set: { name: string; uid: string }): boolean {
  const refs = ownerReferences(release);
  if (refs.some((r) => r.uid === set.uid)) return true;
  return (
    release.metadata.labels?.[FleetLabel.releaseSet] === set.name && !refs.some((r) => r.controller === true)
  );
}

/** Who holds a name the set wants, for a NameConflict message. */
export function holderOf(release: Release): string {
  const owner = (
    release.metadata as { ownerReferences?: { kind?: unknown; name?: unknown; controller?: unknown }[] }
  ).ownerReferences?.find((r) => r.controller === true);
  return owner === undefined
    ? 'a Release no ReleaseSet owns'
    : `a Release owned by ${String(owner.kind)} ${String(owner.name)}`;
}

/** The user pinned the child (convoy.dev/pin that the set did not set during a rollback). */
export function userPin(release: Release): string | undefined {
  const pin = release.metadata.annotations?.[PIN];
  if (pin === undefined || pin === '') return undefined;
  return release.metadata.annotations?.[FleetAnnotation.setPin] === pin ? undefined : pin;
}

export function childState(release: Release | undefined, revisionId: string): ChildState {
  if (release === undefined) return { kind: 'missing' };
  const pin = userPin(release);
  if (pin !== undefined)
    return {
      kind: 'held',
      release,
      reason: 'PinnedByUser',
      message: `pinned by its user to ${pin} (convoy.dev/pin); the set does not update it until unpinned`,
    };
  if (release.spec.suspend)
    return {
      kind: 'held',
      release,
      reason: 'Suspended',
      message: 'suspended by its user (spec.suspend); the set does not update it until resumed',
    };
  if (release.metadata.annotations?.[FleetAnnotation.revision] !== revisionId)
    return { kind: 'outdated', release };
  return { kind: 'updated', release, verdict: combinedVerdict(release) };
}

/** The condition a verdict's signal names, for the failing list's reason and since. */
export function conditionOfSignal(release: Release, signal: string): Condition | undefined {
  const type = signal === 'NewRender' || signal === 'Rollout' ? 'Applied' : signal;
  return release.status?.conditions?.find((c) => c.type === type);
}

/** The revision id a child is at, if any. */
export const revisionOfChild = (release: Release): string | undefined =>
  release.metadata.annotations?.[FleetAnnotation.revision];

/** The Cluster a child targets: its label, else its spec. */
export const clusterOfChild = (release: Release): string =>
  release.metadata.labels?.[FleetLabel.cluster] ?? release.spec.cluster.name;
