/**
 * The `applied` hint of a queue message (issue 13): right after an apply, the reconcile
 * tells drift and health what it wrote and what the cluster answered, so their first
 * check needs neither a Release read nor reads of the target.
 *
 * Built by the reconcile (`appliedHint`) from the Release it read, the status slice it just
 * wrote and its apply answers; used by drift and health (`hintedRelease`) only on a first
 * delivery sent less than HINT_MAX_AGE_MS ago. Otherwise — a redelivery, a late message, a
 * hint too large for SQS — they read as before. Secrets travel as metadata only.
 */
import { parseRelease, type Release } from '../../domain/api/objects.ts';
import type { LoadedRender } from '../../domain/observe/load-render.ts';
import type { AppliedObservation } from '../../domain/reconcile/reconcile.ts';
import { apiGroup, isPlainObject, kubeObjectProblem, type KubeObject } from '../../domain/render/kube-object.ts';
import { asciiJson, type QueueMessage } from '../../domain/runtime/queue-message.ts';
import { statusPatchBody, type AnySlice } from '../../domain/status/slices.ts';

export const HINT_MAX_AGE_MS = 30_000;
/** SQS takes 256 KiB per message; the rest of the body is small. */
const MAX_HINT_BYTES = 200 * 1024;

/** The Release as it is after `write` was applied to its status (conditions merged by type). */
export function releaseAfterWrite(release: Release, write: AnySlice): Record<string, unknown> {
  const patch = statusPatchBody(write.manager, write.slice);
  const old = (release.status ?? {}) as Record<string, unknown>;
  const written = (patch['conditions'] ?? []) as { type: string }[];
  const kept = ((old['conditions'] ?? []) as { type: string }[]).filter((c) => !written.some((w) => w.type === c.type));
  return { ...release, status: { ...old, ...patch, conditions: [...kept, ...written] } };
}

export function appliedHint(release: Release, write: AnySlice, observed: AppliedObservation): QueueMessage['applied'] | undefined {
  const isSecret = (i: number): boolean => {
    const rendered = observed.objects[i];
    return rendered?.kind === 'Secret' && apiGroup(rendered.apiVersion) === '';
  };
  const metadataOnly = (obj: Record<string, unknown>) => ({ apiVersion: obj['apiVersion'], kind: obj['kind'], metadata: obj['metadata'] });
  const live = observed.live.map((obj, i) => (isSecret(i) ? metadataOnly(obj) : obj));
  const objects = observed.objects.map((obj, i) => (isSecret(i) ? metadataOnly(obj) : (obj as unknown as Record<string, unknown>)));
  const hint = { renderRef: observed.renderRef, release: releaseAfterWrite(release, write), live, objects };
  // Measured as sent: non-ASCII text takes up to 6 bytes a UTF-16 unit in the escaped body.
  // Too large with the render: without it (the observers then load it from the store).
  if (asciiJson(hint).length <= MAX_HINT_BYTES) return hint;
  const { objects: _render, ...withoutRender } = hint;
  return asciiJson(withoutRender).length > MAX_HINT_BYTES ? undefined : withoutRender;
}

/**
 * The render as the hint carries it, or undefined when it carries none (an older sender) or its
 * objects do not match `live` one for one: then the observer loads the render from the store.
 */
export function hintedRender(hint: NonNullable<QueueMessage['applied']>): Extract<LoadedRender, { kind: 'loaded' }> | undefined {
  const objects = hint.objects;
  if (objects === undefined || objects.length !== hint.live.length) return undefined;
  if (objects.some((obj) => kubeObjectProblem(obj) !== undefined)) return undefined;
  return { kind: 'loaded', renderRef: hint.renderRef, objects: objects as unknown as KubeObject[] };
}

/** The Release of a hinted message, when the hint may be used; undefined: read it as usual. */
export function hintedRelease(message: QueueMessage, receiveCount: number, now: Date): { release: Release; hint: NonNullable<QueueMessage['applied']> } | undefined {
  const hint = message.applied;
  if (hint === undefined || receiveCount > 1) return undefined;
  if (now.getTime() - Date.parse(message.sentAt) > HINT_MAX_AGE_MS) return undefined;
  const parsed = parseRelease(hint.release);
  if (!parsed.ok || parsed.value.metadata.uid !== message.uid) return undefined;
  if (!hint.live.every(isPlainObject)) return undefined;
  return { release: parsed.value, hint };
}
