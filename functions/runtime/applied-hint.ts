/**
 * The `applied` hint of a queue message: right after an apply, the reconcile
 * tells drift and health what it wrote and what the cluster answered, so their first
 * check needs neither a Release read nor reads of the target.
 *
 * Built by the reconcile (`appliedHint`) from the Release it read, the status slice it just
 * wrote and its apply answers; used by drift and health (`hintedRelease`) only on a first
 * delivery sent less than HINT_MAX_AGE_MS ago. Otherwise — a redelivery, a late message, a
 * hint too large for SQS — they read as before. Secrets travel as metadata only.
 *
 * A message is a hint, never an authority: whoever can send to a queue can write
 * any hint. So a hint is used only when it is sealed — an HMAC-SHA256 (`mac`) over everything
 * the observer takes from it, with a key only the functions hold (`HintKey`, made once per
 * container by its composition root and passed to whatever seals or checks) — and names the
 * message's own Release (namespace, name, uid). A forged or altered hint is ignored: the
 * observer reads the live Release and the cluster, as on any tick.
 * The reconcile builds the hint only from the Release it read on the live API in the same run
 * (functions/runtime/release-reads.ts), so a sealed hint is that verified read plus the
 * reconcile's own write and apply answers, at most HINT_MAX_AGE_MS old.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConfigError } from './config.ts';
import { parseRelease, type Release } from '../../domain/api/objects.ts';
import type { LoadedRender } from '../../domain/observe/load-render.ts';
import type { AppliedObservation } from '../../domain/reconcile/reconcile.ts';
import { canonicalJson } from '../../domain/render/canonical.ts';
import {
  apiGroup,
  isPlainObject,
  kubeObjectProblem,
  type KubeObject,
} from '../../domain/render/kube-object.ts';
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
  const kept = ((old['conditions'] ?? []) as { type: string }[]).filter(
    (c) => !written.some((w) => w.type === c.type),
  );
  return { ...release, status: { ...old, ...patch, conditions: [...kept, ...written] } };
}

type Hint = NonNullable<QueueMessage['applied']>;

/**
 * The functions' hint key. Made once per container by its composition root
 * (functions/runtime/clients.ts; `convoy dev` and the test runtime make one for their three
 * loops) and passed down; the key bytes never leave the closure, so logging a holder of it
 * prints no key material.
 */
export interface HintKey {
  /** The seal of a hint: HMAC-SHA256 over the canonical JSON of every field but `mac`, base64url. */
  mac(hint: Omit<Hint, 'mac'>): string;
  /** Whether `mac` is this key's seal of `hint`; remembered per hint object (a run asks up to three times: admit, mark, handler). */
  holds(hint: Hint, mac: string): boolean;
}

/**
 * A hint key from `configured` (any secret text: CONVOY_HINT_KEY, or the construct's secret
 * read at init; the reconcile, drift and health functions of one installation must share it),
 * else 32 random bytes — enough where the three loops share the key's maker (`convoy dev`,
 * tests, benchmarks); on Lambda without a shared key no hint verifies across functions, so the
 * observers read.
 */
export function hintKey(configured: string | undefined): HintKey {
  if (configured === '')
    throw new ConfigError(
      "CONVOY_HINT_KEY is set but empty: give the installation's shared hint key, or unset it (each container then draws its own)",
    );
  const bytes =
    configured === undefined
      ? randomBytes(32)
      : createHash('sha256').update(`convoy hint key\n${configured}`).digest();
  const checked = new WeakMap<object, Map<string, boolean>>();
  const mac = (hint: Omit<Hint, 'mac'>): string => {
    const { mac: _mac, ...sealed } = hint as Hint;
    return createHmac('sha256', bytes).update(canonicalJson(sealed)).digest('base64url');
  };
  return {
    mac,
    holds(hint, got) {
      const known = checked.get(hint)?.get(got);
      if (known !== undefined) return known;
      let expected: Buffer;
      try {
        expected = Buffer.from(mac(hint));
      } catch {
        // A body built to break the canonical form (nesting too deep for the stack): not the functions' hint.
        return false;
      }
      const given = Buffer.from(got);
      const holds = expected.length === given.length && timingSafeEqual(expected, given);
      const byMac = checked.get(hint) ?? new Map<string, boolean>();
      byMac.set(got, holds);
      checked.set(hint, byMac);
      return holds;
    },
  };
}

/** The hint with its seal (`at` kept when set, else now). */
export function sealHint(
  key: HintKey,
  hint: Omit<Hint, 'mac' | 'at'> & { at?: string | undefined },
  now: Date = new Date(),
): Hint {
  const { mac: _mac, ...rest } = hint as Hint;
  const unsealed = { ...rest, at: hint.at ?? now.toISOString() };
  return { ...unsealed, mac: key.mac(unsealed) };
}

export function appliedHint(
  key: HintKey,
  release: Release,
  write: AnySlice,
  observed: AppliedObservation,
  now: Date = new Date(),
): QueueMessage['applied'] | undefined {
  const isSecret = (i: number): boolean => {
    const rendered = observed.objects[i];
    return rendered?.kind === 'Secret' && apiGroup(rendered.apiVersion) === '';
  };
  const metadataOnly = (obj: Record<string, unknown>) => ({
    apiVersion: obj['apiVersion'],
    kind: obj['kind'],
    metadata: obj['metadata'],
  });
  const live = observed.live.map((obj, i) => (isSecret(i) ? metadataOnly(obj) : obj));
  const objects = observed.objects.map((obj, i) =>
    isSecret(i) ? metadataOnly(obj) : (obj as unknown as Record<string, unknown>),
  );
  const hint = sealHint(
    key,
    { renderRef: observed.renderRef, release: releaseAfterWrite(release, write), live, objects },
    now,
  );
  // Measured as sent: non-ASCII text takes up to 6 bytes a UTF-16 unit in the escaped body.
  // Too large with the render: without it (the observers then load it from the store).
  if (asciiJson(hint).length <= MAX_HINT_BYTES) return hint;
  const { objects: _render, mac: _mac, ...withoutRender } = hint;
  const sealed = sealHint(key, withoutRender, now);
  return asciiJson(sealed).length > MAX_HINT_BYTES ? undefined : sealed;
}

/**
 * The render as the hint carries it, or undefined when it carries none (an older sender) or its
 * objects do not match `live` one for one: then the observer loads the render from the store.
 */
export function hintedRender(
  hint: NonNullable<QueueMessage['applied']>,
): Extract<LoadedRender, { kind: 'loaded' }> | undefined {
  const objects = hint.objects;
  if (objects === undefined || objects.length !== hint.live.length) return undefined;
  if (objects.some((obj) => kubeObjectProblem(obj) !== undefined)) return undefined;
  return { kind: 'loaded', renderRef: hint.renderRef, objects: objects as unknown as KubeObject[] };
}

/** The Release of a hinted message, when the hint may be used; undefined: read it as usual. */
export function hintedRelease(
  key: HintKey | undefined,
  message: QueueMessage,
  receiveCount: number,
  now: Date,
): { release: Release; hint: Hint } | undefined {
  const hint = message.applied;
  if (hint === undefined || hintProblem(key, message, receiveCount, now) !== undefined) return undefined;
  const parsed = parseRelease(hint.release);
  return parsed.ok ? { release: parsed.value, hint } : undefined;
}

/**
 * Why a message's hint is not used (undefined: it is): none carried, no key to check it with (a
 * loop built without one), a redelivery, too old, not sealed by the functions' key, or not about
 * the message's own Release. A forged hint ends here.
 */
export function hintProblem(
  key: HintKey | undefined,
  message: QueueMessage,
  receiveCount: number,
  now: Date,
): string | undefined {
  const hint = message.applied;
  if (hint === undefined) return 'the message carries no hint';
  if (key === undefined) return 'this loop holds no hint key to check a seal with';
  if (receiveCount > 1) return 'a redelivery';
  if (now.getTime() - Date.parse(message.sentAt) > HINT_MAX_AGE_MS)
    return `sent more than ${HINT_MAX_AGE_MS / 1000} s ago`;
  if (hint.mac === undefined || hint.at === undefined) return 'the hint is not sealed';
  if (!key.holds(hint, hint.mac))
    return "the hint's seal is not the functions' (forged, altered, or sealed with another key)";
  const at = Date.parse(hint.at);
  if (Number.isNaN(at) || now.getTime() - at > HINT_MAX_AGE_MS)
    return `sealed more than ${HINT_MAX_AGE_MS / 1000} s ago`;
  const parsed = parseRelease(hint.release);
  if (!parsed.ok) return 'the hinted Release does not parse';
  const { namespace, name, uid } = parsed.value.metadata;
  if (namespace !== message.namespace || name !== message.name || uid !== message.uid) {
    return `the hint is about ${namespace ?? '?'}/${name} (uid ${uid ?? '?'}), not the message's Release ${message.namespace}/${message.name} (uid ${message.uid})`;
  }
  if (!hint.live.every(isPlainObject)) return 'the hint carries a live object that is not an object';
  return undefined;
}
