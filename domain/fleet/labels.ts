import { FieldManager } from '../status/field-managers.ts';

/**
 * The labels and annotations a ReleaseSet puts on its children and reads on itself. They are API:
 * the runtime lists children by FleetLabel.releaseSet; users approve steps with FleetAnnotation.approve
 * and ask for a fleet rollback with FleetAnnotation.rollback.
 */
export const FleetLabel = {
  /** On each child: the name of the ReleaseSet that owns it. */
  releaseSet: 'convoy.dev/release-set',
  /** On each child: the name of the Cluster it targets. */
  cluster: 'convoy.dev/cluster',
} as const;

export const FleetAnnotation = {
  /** On each child: status.revision.id of the rollout that wrote it. */
  revision: 'convoy.dev/release-set-revision',
  /** On each child: the revision it was at (and ready) before this one, for a fleet rollback. */
  previousRevision: 'convoy.dev/release-set-previous-revision',
  /** On each child: the render that was applied and ready at previousRevision. */
  previousRender: 'convoy.dev/release-set-previous-render',
  /** On each child the set pinned during a fleet rollback: the renderRef it pinned (tells its pin from a user's). */
  setPin: 'convoy.dev/release-set-pin',
  /** On the ReleaseSet: `<step name>@<status.revision.id>` approves that step of that revision. */
  approve: 'convoy.dev/approve',
  /**
   * On the ReleaseSet: `<status.revision.id>` asks the set to roll every Cluster that revision
   * updated back to status.lastSucceededRevision now, once per revision (rollback-request.ts).
   */
  rollback: 'convoy.dev/rollback',
} as const;

/** The field manager of the ReleaseSet status and of the children the set writes. */
export const RELEASE_SET_FIELD_MANAGER = FieldManager.releaseSet;

/** Annotations a user owns on a child; the set never writes them (its template may not either). */
export const USER_ANNOTATIONS = [
  'convoy.dev/pin',
  'convoy.dev/sync-requested-at',
  'convoy.dev/force-sync-requested-at',
] as const;
