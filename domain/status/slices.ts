import type { Condition } from '../api/common.ts';
import type { ReleaseStatus } from '../api/release-status.ts';
import { FieldManager, type StatusFieldManager } from './field-managers.ts';
import { ConditionType } from './reasons.ts';

/** The fields of status each writer owns (status-and-conditions.txt, "Who writes the status"). */
export const ownedFields = {
  [FieldManager.release]: [
    'lastAttempted',
    'lastSuccessful',
    'lastHealthy',
    'rollout',
    'pin',
    'waves',
    'lifecycle',
    'resolvedRetentionPolicy',
    'reconciledAt',
    'lastHandledSyncAt',
    'lastHandledForceSyncAt',
    'observedGeneration',
  ],
  [FieldManager.observe]: [],
  [FieldManager.health]: ['healthSummary'],
} as const satisfies Record<StatusFieldManager, readonly (keyof ReleaseStatus)[]>;

/** The conditions each writer owns. */
export const ownedConditions = {
  [FieldManager.release]: [
    ConditionType.Applied,
    ConditionType.RolloutSucceeded,
    ConditionType.LifecycleSucceeded,
  ],
  [FieldManager.observe]: [ConditionType.InSync],
  [FieldManager.health]: [ConditionType.Healthy],
} as const satisfies Record<StatusFieldManager, readonly string[]>;

type Owned<M extends StatusFieldManager> = (typeof ownedFields)[M][number];

/**
 * What one writer applies. Every owned field is a required key (its value may be
 * undefined), so leaving one out — which under server-side apply deletes it — is a
 * compile error, never an accident. `undefined` means "this field is absent now".
 */
export type StatusSlice<M extends StatusFieldManager> = {
  [K in Owned<M>]-?: ReleaseStatus[K] | undefined;
} & { conditions: Condition[] };

export type ReleaseSlice = StatusSlice<typeof FieldManager.release>;
export type ObserveSlice = StatusSlice<typeof FieldManager.observe>;
export type HealthSlice = StatusSlice<typeof FieldManager.health>;

export type AnySlice =
  | { manager: typeof FieldManager.release; slice: ReleaseSlice }
  | { manager: typeof FieldManager.observe; slice: ObserveSlice }
  | { manager: typeof FieldManager.health; slice: HealthSlice };

export class ForeignConditionError extends Error {
  override name = 'ForeignConditionError';
}

/**
 * The /status apply body of one writer: only its own fields and conditions,
 * with absent (undefined) fields left out so the server removes them.
 */
export function statusPatchBody(
  manager: StatusFieldManager,
  slice: Record<string, unknown>,
): Record<string, unknown> {
  const allowed: readonly string[] = ownedConditions[manager];
  const conditions = (slice['conditions'] ?? []) as Condition[];
  for (const c of conditions) {
    if (!allowed.includes(c.type)) {
      throw new ForeignConditionError(
        `field manager ${manager} may not write condition ${c.type}; it owns only ${allowed.join(', ')}`,
      );
    }
  }
  const fields: readonly string[] = ownedFields[manager];
  const status: Record<string, unknown> = {};
  for (const key of fields) {
    if (slice[key] !== undefined) status[key] = slice[key];
  }
  status['conditions'] = conditions;
  return status;
}
