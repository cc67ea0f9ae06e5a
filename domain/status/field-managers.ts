/**
 * Field manager names are API: each status writer owns exactly the fields the
 * status specification assigns to it, and objects on target clusters belong to `convoy`.
 */
export const FieldManager = {
  /** The controller-manager (reconcile function): Applied, RolloutSucceeded, LifecycleSucceeded and the rest. */
  release: 'convoy-release',
  /** The drift loop: InSync. */
  observe: 'convoy-observe',
  /** The health loop: Healthy and healthSummary. */
  health: 'convoy-health',
  /** The ReleaseSet runtime: the ReleaseSet status and the child Releases it writes. */
  releaseSet: 'convoy-releaseset',
  /** The notify loop: a Notification's status (what each destination was sent, Delivering). */
  notify: 'convoy-notify',
  /** Server-side apply of rendered objects on target clusters. */
  apply: 'convoy',
} as const;

export type StatusFieldManager = (typeof FieldManager)['release' | 'observe' | 'health'];
