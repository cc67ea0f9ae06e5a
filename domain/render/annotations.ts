/** Annotations on rendered objects that change how convoy treats them (API.md). */
import type { KubeObject } from './kube-object.ts';

export { SYNC_WAVE_ANNOTATION } from './order.ts';

/** `convoy.dev/prune: disabled`: the object is never pruned, even when a later render drops it. */
export const PRUNE_ANNOTATION = 'convoy.dev/prune';

export function isPruneDisabled(obj: KubeObject): boolean {
  return obj.metadata.annotations?.[PRUNE_ANNOTATION] === 'disabled';
}

/**
 * `convoy.dev/release: <namespace>/<name>` on every rendered object: which
 * Release applied it. Prune deletes only objects that carry this Release's
 * mark, so one Release never prunes another's objects, and even an object
 * whose only field is its name has a field convoy owns.
 */
export const RELEASE_ANNOTATION = 'convoy.dev/release';

export function releaseMarkOf(obj: { metadata?: unknown }): string | undefined {
  const metadata = obj.metadata as { annotations?: Record<string, unknown> } | undefined;
  const value = metadata?.annotations?.[RELEASE_ANNOTATION];
  return typeof value === 'string' ? value : undefined;
}
