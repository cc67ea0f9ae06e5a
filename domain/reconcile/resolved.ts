import type { ResolvedCluster, ResolvedMutation, ResolvedSource } from './ports.ts';

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
