/**
 * Safe readers over a live object's plain JSON, and the verdict constructors
 * every rule uses. A field of the wrong type reads as absent, so a rule never
 * throws on a malformed or partially written status.
 */
import type { HealthState, KubeObject, ObjectHealth } from '../types.ts';

export function isRecord(value: unknown): value is KubeObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path`, or undefined when any step is missing or not an object. */
export function field(obj: KubeObject, path: readonly string[]): unknown {
  let current: unknown = obj;
  for (const key of path) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** A number at `path`, or `fallback` when absent or not a number. */
export function num(obj: KubeObject, path: readonly string[], fallback: number): number {
  const value = field(obj, path);
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** A number at `path`, or undefined when absent or not a number. */
export function optionalNum(obj: KubeObject, path: readonly string[]): number | undefined {
  const value = field(obj, path);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A string at `path`, or undefined when absent or not a string. */
export function str(obj: KubeObject, path: readonly string[]): string | undefined {
  const value = field(obj, path);
  return typeof value === 'string' ? value : undefined;
}

/** The object elements of the list at `path` (non-objects are skipped); [] when absent. */
export function records(obj: KubeObject, path: readonly string[]): KubeObject[] {
  const value = field(obj, path);
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** One entry of `status.conditions`, as the Kubernetes API conventions define it. */
export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration: number | undefined;
}

export function conditions(obj: KubeObject): Condition[] {
  return records(obj, ['status', 'conditions']).flatMap((c) => {
    const type = str(c, ['type']);
    if (type === undefined) return [];
    return [
      {
        type,
        status: str(c, ['status']) ?? 'Unknown',
        reason: str(c, ['reason']) ?? '',
        message: str(c, ['message']) ?? '',
        observedGeneration: optionalNum(c, ['observedGeneration']),
      },
    ];
  });
}

export function condition(obj: KubeObject, type: string): Condition | undefined {
  return conditions(obj).find((c) => c.type === type);
}

/** "reason: message" of a condition, skipping the empty parts. */
export function describeCondition(c: Condition): string {
  return [c.reason, c.message].filter((part) => part !== '').join(': ');
}

/** `text: detail`, or just `text` when detail is empty. */
export function withDetail(text: string, detail: string | undefined): string {
  return detail === undefined || detail === '' ? text : `${text}: ${detail}`;
}

/** The API group of an apiVersion: "apps/v1" → "apps", "v1" → "" (core). */
export function apiGroup(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

function verdict(state: HealthState, message: string): ObjectHealth {
  return { state, message };
}

export const healthy = (message: string): ObjectHealth => verdict('Healthy', message);
export const progressing = (message: string): ObjectHealth => verdict('Progressing', message);
export const degraded = (message: string): ObjectHealth => verdict('Degraded', message);
export const unknown = (message: string): ObjectHealth => verdict('Unknown', message);
