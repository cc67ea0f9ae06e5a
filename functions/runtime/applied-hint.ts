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
import type { AppliedObservation } from '../../domain/reconcile/reconcile.ts';
import { apiGroup, isPlainObject } from '../../domain/render/kube-object.ts';
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
  const live = observed.live.map((obj, i) => {
    const rendered = observed.objects[i];
    const secret = rendered?.kind === 'Secret' && apiGroup(rendered.apiVersion) === '';
    return secret ? { apiVersion: obj['apiVersion'], kind: obj['kind'], metadata: obj['metadata'] } : obj;
  });
  const hint = { renderRef: observed.renderRef, release: releaseAfterWrite(release, write), live };
  // Measured as sent: non-ASCII text takes up to 6 bytes a UTF-16 unit in the escaped body.
  return asciiJson(hint).length > MAX_HINT_BYTES ? undefined : hint;
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
