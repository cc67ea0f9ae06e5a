/**
 * `status.healthSummary` (API.md): counts per state and the objects that are
 * not healthy — at most 20, worst first, then by apiVersion, kind, namespace,
 * name, so the same cluster state always yields the same summary (the health
 * function skips its status write when nothing changed).
 */
import { healthSeverity } from './severity.ts';
import type { HealthState, ObjectHealth } from './types.ts';

export const MAX_SUMMARY_OBJECTS = 20;
/** Messages can quote controllers at length; the status stays small. */
export const MAX_SUMMARY_MESSAGE_LENGTH = 256;

export interface HealthObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface HealthEntry {
  ref: HealthObjectRef;
  health: ObjectHealth;
}

export interface HealthSummaryObject {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  state: Exclude<HealthState, 'Healthy'>;
  message: string;
}

export interface HealthSummary {
  renderRef: string;
  checkedAt: string;
  total: number;
  healthy: number;
  progressing: number;
  degraded: number;
  missing: number;
  unknown: number;
  objects: HealthSummaryObject[];
}

function truncate(message: string): string {
  return message.length <= MAX_SUMMARY_MESSAGE_LENGTH
    ? message
    : `${message.slice(0, MAX_SUMMARY_MESSAGE_LENGTH - 1)}…`;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareEntries(a: HealthEntry, b: HealthEntry): number {
  return (
    healthSeverity(b.health.state) - healthSeverity(a.health.state) ||
    compareText(a.ref.apiVersion, b.ref.apiVersion) ||
    compareText(a.ref.kind, b.ref.kind) ||
    compareText(a.ref.namespace ?? '', b.ref.namespace ?? '') ||
    compareText(a.ref.name, b.ref.name)
  );
}

function isNotHealthy(
  entry: HealthEntry,
): entry is HealthEntry & { health: { state: Exclude<HealthState, 'Healthy'> } } {
  return entry.health.state !== 'Healthy';
}

/** `checkedAt` is the RFC 3339 time the caller writes to the status. */
export function summarize(
  entries: readonly HealthEntry[],
  renderRef: string,
  checkedAt: string,
): HealthSummary {
  const count = (state: HealthState): number => entries.filter((e) => e.health.state === state).length;
  const objects = entries
    .filter(isNotHealthy)
    .sort(compareEntries)
    .slice(0, MAX_SUMMARY_OBJECTS)
    .map(({ ref, health }): HealthSummaryObject => ({
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      ...(ref.namespace !== undefined && ref.namespace !== '' ? { namespace: ref.namespace } : {}),
      name: ref.name,
      state: health.state,
      message: truncate(health.message),
    }));
  return {
    renderRef,
    checkedAt,
    total: entries.length,
    healthy: count('Healthy'),
    progressing: count('Progressing'),
    degraded: count('Degraded'),
    missing: count('Missing'),
    unknown: count('Unknown'),
    objects,
  };
}
