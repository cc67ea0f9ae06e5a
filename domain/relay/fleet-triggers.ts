/**
 * Which watch events send a ReleaseSet a fleet message: the relay's side of the fleet
 * loop. The fleet function writes only the set's /status and its children, so, as for Releases
 * (release-events.ts), only changes a user makes to the set count, never its status; a child
 * counts only when its combined verdict (domain/status/verdict.ts) changes, never for other
 * status churn, or every health check of every child would wake its set.
 *
 * - a ReleaseSet: added, recreated (new uid), its metadata.generation changed, or one of its
 *   request annotations (convoy.dev/approve, convoy.dev/rollback) changed. A deleted set gets no
 *   message: its children follow their ownerReferences.
 * - a Cluster: added, deleted, relabelled or reannotated: every set of its namespace, since any of
 *   them may start or stop selecting it (selection reads labels and names) or substitute its
 *   labels or annotations into its child (`${cluster.labels.<k>}`, `${cluster.annotations.<k>}`).
 *   kubectl's last-applied-configuration is not compared (CLUSTER_ANNOTATIONS_IGNORED): it
 *   copies the object and is no setting of the Cluster; a status-only change counts for nothing.
 * - a Release labelled convoy.dev/release-set: added, deleted, moved between sets, or what its set
 *   sees of it changed (childView): its combined verdict, the revision it is at
 *   (convoy.dev/release-set-revision) or whether its user pinned it. The revision counts on its
 *   own: a template change that leaves the child's spec as it is (an annotation) moves the child
 *   to the new revision without a new generation, so its verdict stays Ready and nothing else
 *   would tell the set that the child it just wrote is already there (the bench's rollout 2 waited
 *   for the fleet function's own 30-s recheck at every step).
 *
 * Pure; the relay (relay/relay.ts) maps the answers to sends, coalesced per set by
 * domain/relay/coalesce.ts with FLEET_COALESCE_RULE.
 */
import type { Release } from '../api/objects.ts';
import { FleetAnnotation, FleetLabel } from '../fleet/labels.ts';
import { combinedVerdict } from '../status/verdict.ts';

/** A manual fleet rollback request on the set (the CLI writes it; docs/fleet.md). */
export const FLEET_ROLLBACK_ANNOTATION = 'convoy.dev/rollback';

/** Annotations on a ReleaseSet that request work; neither changes metadata.generation. */
export const FLEET_REQUEST_ANNOTATIONS = [FleetAnnotation.approve, FLEET_ROLLBACK_ANNOTATION] as const;

/** What the trigger rules read of a ReleaseSet (the relay's slim copy fits). */
export interface WatchedReleaseSet {
  readonly metadata?:
    | {
        readonly name?: string | undefined;
        readonly namespace?: string | undefined;
        readonly uid?: string | undefined;
        readonly generation?: number | undefined;
        readonly annotations?: Readonly<Record<string, string>> | undefined;
      }
    | undefined;
}

/**
 * Cluster annotations no set is woken for: kubectl's copy of the whole object as last applied
 * (as large as the object, rewritten by every `kubectl apply`, and no setting a template reads).
 * The relay's slim Cluster drops them (relay/watch/slim.ts).
 */
export const CLUSTER_ANNOTATIONS_IGNORED: readonly string[] = [
  'kubectl.kubernetes.io/last-applied-configuration',
];

/** What the trigger rules read of a Cluster. */
export interface WatchedCluster {
  readonly metadata?:
    | {
        readonly name?: string | undefined;
        readonly labels?: Readonly<Record<string, string>> | undefined;
        /**
         * Its annotations, compared for equality only: the relay's slim copy holds a long value as its
         * digest (relay/watch/slim.ts), which compares the same.
         */
        readonly annotations?: Readonly<Record<string, string>> | undefined;
      }
    | undefined;
}

/** Why a change of a ReleaseSet (old → next; undefined = absent) sends it a message, or undefined. */
export function releaseSetChangeCause(
  old: WatchedReleaseSet | undefined,
  next: WatchedReleaseSet | undefined,
): string | undefined {
  if (next === undefined) return undefined;
  if (old === undefined) return 'ReleaseSet added';
  const before = old.metadata ?? {};
  const after = next.metadata ?? {};
  if (before.uid !== undefined && after.uid !== undefined && before.uid !== after.uid)
    return 'ReleaseSet recreated';
  if (before.generation !== after.generation)
    return `spec changed (generation ${before.generation ?? '?'} → ${after.generation ?? '?'})`;
  for (const key of FLEET_REQUEST_ANNOTATIONS) {
    if ((before.annotations?.[key] ?? '') !== (after.annotations?.[key] ?? ''))
      return `annotation ${key} changed`;
  }
  return undefined;
}

/**
 * Why a change of a Cluster may change what the sets of its namespace select or write (its
 * labels: selection and `${cluster.labels.<k>}`; its annotations: `${cluster.annotations.<k>}`),
 * or undefined (spec, status or resourceVersion only, or last-applied-configuration).
 */
export function clusterChangeCause(
  old: WatchedCluster | undefined,
  next: WatchedCluster | undefined,
): string | undefined {
  const name = next?.metadata?.name ?? old?.metadata?.name ?? '?';
  if (old === undefined && next === undefined) return undefined;
  if (old === undefined) return `Cluster ${name} added`;
  if (next === undefined) return `Cluster ${name} deleted`;
  if (!sameStringMap(old.metadata?.labels, next.metadata?.labels)) return `Cluster ${name} relabelled`;
  if (!sameStringMap(old.metadata?.annotations, next.metadata?.annotations, CLUSTER_ANNOTATIONS_IGNORED))
    return `Cluster ${name} reannotated`;
  return undefined;
}

/**
 * The child's combined verdict, reduced to what a set acts on: ready (and whether health was
 * assessed), or the signal and kind it waits or fails on. The message is left out (it carries
 * generations and condition messages).
 */
export function childVerdictKey(release: Release): string {
  const verdict = combinedVerdict(release);
  if (verdict.ready) return `Ready/${verdict.health}`;
  return `${verdict.kind}/${verdict.signal}${verdict.retrying === true ? '/retrying' : ''}`;
}

/**
 * The child annotations the set reads (domain/fleet/child-state.ts) besides convoy.dev/pin: the
 * relay's slim Release keeps them (relay/watch/slim.ts).
 */
export const CHILD_ANNOTATIONS = [FleetAnnotation.revision, FleetAnnotation.setPin] as const;

/** What the set acts on of one child (domain/fleet/child-state.ts); a change of any of it may move the set. */
export interface ChildView {
  /** convoy.dev/release-set-revision: the revision the set last wrote it at. */
  readonly revision: string | undefined;
  /** Its user pinned it (convoy.dev/pin the set did not set): the set holds it. */
  readonly userPinned: boolean;
  /** childVerdictKey. */
  readonly verdict: string;
}

export function childView(release: Release): ChildView {
  const annotations = release.metadata.annotations ?? {};
  const pin = annotations['convoy.dev/pin'] ?? '';
  return {
    revision: annotations[FleetAnnotation.revision],
    userPinned: pin !== '' && annotations[FleetAnnotation.setPin] !== pin,
    verdict: childVerdictKey(release),
  };
}

/** The set a Release's label names, if any. */
export function releaseSetOfChild(release: Release | undefined): string | undefined {
  const name = release?.metadata.labels?.[FleetLabel.releaseSet];
  return name === undefined || name === '' ? undefined : name;
}

/** One set to send a message to, and why. */
export interface SetNotice {
  readonly set: string;
  readonly cause: string;
}

/**
 * The sets a change of a Release (old → next; undefined = absent) concerns: the set it is a
 * child of when it appears, disappears or what the set sees of it (childView: verdict, revision,
 * user pin) changes; both sets when it moves from one to another. None for a Release no set
 * labels, or a change that leaves its view as is (status churn, other annotations).
 */
export function childVerdictNotices(old: Release | undefined, next: Release | undefined): SetNotice[] {
  const before = releaseSetOfChild(old);
  const after = releaseSetOfChild(next);
  const name = next?.metadata.name ?? old?.metadata.name ?? '?';
  if (before === undefined && after === undefined) return [];
  if (old === undefined || next === undefined || before !== after) {
    const notices: SetNotice[] = [];
    if (before !== undefined)
      notices.push({
        set: before,
        cause: `child Release ${name} ${next === undefined ? 'deleted' : 'left the set'}`,
      });
    if (after !== undefined)
      notices.push({
        set: after,
        cause: `child Release ${name} ${old === undefined ? 'added' : 'joined the set'}`,
      });
    return notices;
  }
  const set = after as string;
  const was = childView(old);
  const is = childView(next);
  if (was.verdict !== is.verdict)
    return [{ set, cause: `child Release ${name} verdict ${was.verdict} → ${is.verdict}` }];
  if (was.revision !== is.revision)
    return [{ set, cause: `child Release ${name} at revision ${is.revision ?? '(none)'} (${is.verdict})` }];
  if (was.userPinned !== is.userPinned)
    return [{ set, cause: `child Release ${name} ${is.userPinned ? 'pinned' : 'unpinned'} by its user` }];
  return [];
}

/** Whether `a` and `b` hold the same keys and values, the `ignored` keys left out. */
function sameStringMap(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
  ignored: readonly string[] = [],
): boolean {
  const left = a ?? {};
  const right = b ?? {};
  const keys = Object.keys(left).filter((key) => !ignored.includes(key));
  if (keys.length !== Object.keys(right).filter((key) => !ignored.includes(key)).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && left[key] === right[key]);
}
