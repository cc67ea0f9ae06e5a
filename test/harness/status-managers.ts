// Which field manager owns a Release status condition (server-side apply's managedFields),
// and a condition by type: what the observer tests assert their loops wrote.
import type { Condition } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';

interface ManagedFields {
  manager?: string;
  subresource?: string;
  fieldsV1?: unknown;
}

export const releaseCondition = (release: Release, type: string): Condition | undefined =>
  release.status?.conditions?.find((c) => c.type === type);

/** The field manager that owns the status condition `type` (a server-side apply list-map key). */
export const statusManagerOf = (release: Release, type: string): string | undefined =>
  ((release.metadata as { managedFields?: ManagedFields[] }).managedFields ?? []).find(
    (f) =>
      f.subresource === 'status' &&
      JSON.stringify(f.fieldsV1 ?? {}).includes(JSON.stringify(`k:{"type":"${type}"}`)),
  )?.manager;
