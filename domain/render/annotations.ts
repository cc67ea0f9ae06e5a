/** Annotations on rendered objects that change how convoy treats them (API.md). */
import type { KubeObject } from './kube-object.ts';

export { SYNC_WAVE_ANNOTATION } from './order.ts';

/** `convoy.dev/prune: disabled`: the object is never pruned, even when a later render drops it. */
export const PRUNE_ANNOTATION = 'convoy.dev/prune';

export function isPruneDisabled(obj: KubeObject): boolean {
  return obj.metadata.annotations?.[PRUNE_ANNOTATION] === 'disabled';
}
