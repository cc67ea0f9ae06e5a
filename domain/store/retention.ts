import { parseDuration } from '../runtime/duration.ts';
import { compareNewestFirst } from './render-store.ts';
import type { StoredRenderMeta } from './render-store.ts';

/**
 * Render store retention: which stored renders of one Release may go.
 *
 * The rule (ARCHITECTURE.md, "Render store"): keep at most `maxRenders` and
 * nothing older than `maxAge`, but never a render named by lastSuccessful,
 * lastHealthy, rollout (current or previous) or a pin.
 *
 * How protected renders count: the newest `maxRenders` renders form the
 * window, and a protected render inside the window takes a slot like any
 * other. Protected renders outside the window (or older than maxAge) are
 * kept in addition. So the store keeps "the newest maxRenders renders
 * younger than maxAge, plus every protected render": at most maxRenders
 * plus the protected renders the window missed (a handful).
 *
 * Why: "protected renders never count" would keep up to maxRenders + 5 even
 * when the protected ones are the newest; "protected renders always count"
 * would delete a newer render (a failed attempt the user may want to
 * inspect or pin) to make room for an older protected one.
 */

export interface RetentionPolicy {
  readonly maxRenders: number;
  /** A Go duration such as `720h` or `1h30m`. */
  readonly maxAge: string;
}

/** `spec.retentionPolicy`: every field optional, merged over the installation default. */
export interface RetentionPolicyOverride {
  readonly maxRenders?: number | undefined;
  readonly maxAge?: string | undefined;
}

/** The installation default when the operator configures none: 20 renders, 30 days. */
export const DEFAULT_RETENTION_POLICY: RetentionPolicy = { maxRenders: 20, maxAge: '720h' };

export class InvalidRetentionPolicyError extends Error {
  override name = 'InvalidRetentionPolicyError';
  readonly retryable = false;
  /** The field at fault, e.g. `spec.retentionPolicy.maxAge`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/**
 * Field-wise merge of a Release's `spec.retentionPolicy` over the
 * installation default: the value for `status.resolvedRetentionPolicy`.
 * @throws InvalidRetentionPolicyError when a field of either is invalid (the CRD rejects these at admission, so this means a bad installation default or an unvalidated object).
 */
export function resolveRetentionPolicy(
  releasePolicy: RetentionPolicyOverride | undefined,
  installationDefault: RetentionPolicy = DEFAULT_RETENTION_POLICY,
): RetentionPolicy {
  checkPolicy(installationDefault, 'installation default retentionPolicy');
  const resolved: RetentionPolicy = {
    maxRenders: releasePolicy?.maxRenders ?? installationDefault.maxRenders,
    maxAge: releasePolicy?.maxAge ?? installationDefault.maxAge,
  };
  checkPolicy(resolved, 'spec.retentionPolicy');
  return resolved;
}

/**
 * The renderRefs retention deletes, oldest first. `renders` may come in any
 * order and may repeat a renderRef. A protected renderRef is never returned.
 * A render whose createdAt does not parse has no known age: it is never
 * deleted for age, sorts as the oldest, and goes when it falls outside the
 * maxRenders window.
 * @throws InvalidRetentionPolicyError when the policy is invalid.
 */
export function selectExpired(
  renders: readonly StoredRenderMeta[],
  policy: RetentionPolicy,
  protectedRefs: ReadonlySet<string>,
  now: Date,
): string[] {
  const maxAgeMs = checkPolicy(policy, 'retentionPolicy');
  const seen = new Set<string>();
  const newestFirst = [...renders].sort(compareNewestFirst).filter((render) => {
    if (seen.has(render.renderRef)) return false;
    seen.add(render.renderRef);
    return true;
  });

  const expired: string[] = [];
  newestFirst.forEach((render, index) => {
    if (protectedRefs.has(render.renderRef)) return;
    const createdMs = Date.parse(render.createdAt);
    const outsideWindow = index >= policy.maxRenders;
    const tooOld = !Number.isNaN(createdMs) && now.getTime() - createdMs > maxAgeMs;
    if (outsideWindow || tooOld) expired.push(render.renderRef);
  });
  return expired.reverse();
}

/** The status fields that name a render retention must keep. */
export interface RetentionAnchors {
  readonly lastSuccessful?: { readonly renderRef?: string | undefined } | undefined;
  readonly lastHealthy?: { readonly renderRef?: string | undefined } | undefined;
  readonly rollout?:
    { readonly renderRef?: string | undefined; readonly previousRenderRef?: string | undefined } | undefined;
  readonly pin?: { readonly renderRef?: string | undefined } | undefined;
}

/**
 * The protected renderRefs of a Release: lastSuccessful, lastHealthy,
 * rollout, rollout's previous render and the pin. Pass the
 * `convoy.dev/pin` annotation too: it is the source of truth and may be
 * newer than `status.pin`.
 */
export function protectedRenderRefs(
  status: RetentionAnchors | undefined,
  pinAnnotation?: string,
): Set<string> {
  const refs = [
    status?.lastSuccessful?.renderRef,
    status?.lastHealthy?.renderRef,
    status?.rollout?.renderRef,
    status?.rollout?.previousRenderRef,
    status?.pin?.renderRef,
    pinAnnotation,
  ];
  return new Set(refs.filter((ref): ref is string => ref !== undefined && ref !== ''));
}

/** @returns maxAge in milliseconds. */
function checkPolicy(policy: RetentionPolicy, where: string): number {
  if (!Number.isSafeInteger(policy.maxRenders) || policy.maxRenders < 1) {
    throw new InvalidRetentionPolicyError(
      `${where}.maxRenders`,
      `${where}.maxRenders must be a whole number of at least 1, got ${String(policy.maxRenders)}`,
    );
  }
  const age = parseDuration(policy.maxAge);
  if (!age.ok) {
    throw new InvalidRetentionPolicyError(`${where}.maxAge`, `${where}.maxAge: ${age.error}`);
  }
  return age.ms;
}
