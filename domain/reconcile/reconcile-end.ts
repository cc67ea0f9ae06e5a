import type { HookStatus, LifecycleHook, Release } from '../api/index.ts';
import type { Halt } from './halt.ts';
import type { RetentionPolicy } from './ports.ts';
import type { PinState, Resolved } from './resolved.ts';
import type { RolloutProgress } from './rollout.ts';

/** Everything a reconcile learned, however far it got. */
export interface ReconcileEnd {
  release: Release;
  now: Date;
  resolved: Resolved;
  /** undefined: every step ran (a render is applied). */
  halt?: Halt;
  /** Set once the sync waves were reached. */
  progress?: RolloutProgress;
  pinState?: PinState;
  /** A manual-mode /sync request this run applied. */
  handledSyncAt?: string;
  /** A force-sync request this run handled (success or not). */
  handledForceSyncAt?: string;
  retention: RetentionPolicy;
  /** Hooks of spec.lifecycleRef and their status entries, when the reconcile reached them. */
  lifecycle?: { hooks: readonly LifecycleHook[]; status: HookStatus[] };
  /** Applied True without applying: manual mode, render unchanged. */
  upToDateMessage?: string;
}
