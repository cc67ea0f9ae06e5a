import type { KubeObject } from '../render/kube-object.ts';
import type { ResolvedCluster, ResolvedMutation, ResolvedSource, TargetCluster } from './ports.ts';

/**
 * What the reconcile found before it stopped (status.lastAttempted's resolved* fields). The
 * steps fill it as they go, so a stop reports what was found up to it.
 */
export interface Resolved {
  source?: ResolvedSource;
  cluster?: ResolvedCluster;
  mutations?: ResolvedMutation[];
  renderRef?: string;
}

/** status.pin.state as the step "Load the pinned render" found it. */
export type PinState = 'Active' | 'NotFound' | 'NoStore';

/** The render a run applies: from the steps that render it, or from the store for a pin. */
export interface PreparedRender {
  target: TargetCluster;
  objects: KubeObject[];
  renderRef: string;
  /** The render came from the store because of a pin; it is not written again. */
  pinned: boolean;
}

/** The render as the run's applies and dry runs answered it: what the observers check first after an apply. */
export interface AppliedObservation {
  renderRef: string;
  objects: readonly KubeObject[];
  /** In render order: the live object as answered. */
  live: readonly Record<string, unknown>[];
}
