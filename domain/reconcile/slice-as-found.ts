import type { ReleaseStatus } from '../api/index.ts';
import { FieldManager } from '../status/field-managers.ts';
import { ownedConditions, ownedFields, type ReleaseSlice } from '../status/slices.ts';

/**
 * The convoy-release slice as the status has it: every field the writer owns
 * (domain/status/slices.ts names them) and its own conditions, unchanged. A
 * write that changes only some fields starts from this, because the slice is a
 * server-side apply of the whole writer: a field left out would be removed.
 */
export function sliceAsFound(status: ReleaseStatus | undefined): ReleaseSlice {
  const found = status ?? {};
  const owned: readonly string[] = ownedConditions[FieldManager.release];
  const fields = Object.fromEntries(
    ownedFields[FieldManager.release].map((key) => [key, found[key]]),
  ) as Omit<ReleaseSlice, 'conditions'>;
  return { ...fields, conditions: (found.conditions ?? []).filter((c) => owned.includes(c.type)) };
}
