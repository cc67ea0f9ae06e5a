/**
 * Health vocabulary shared by the built-in rules, the CEL checks, the
 * summary and the callers (the health function and reconcile's wave gate).
 *
 * Objects are the plain JSON the API server returns; nothing here depends on
 * a Kubernetes client.
 */

/** The state of one object, and (via `aggregate`) of a set of objects. */
export type HealthState = 'Healthy' | 'Progressing' | 'Degraded' | 'Missing' | 'Unknown';

/** The verdict of one rule or check on one object. `message` never carries Secret data. */
export interface ObjectHealth {
  state: HealthState;
  message: string;
}

/** One entry of `spec.healthAssessment.checks` (API.md). */
export interface HealthCheck {
  apiVersion: string;
  kind: string;
  /** CEL, evaluated with `object` bound to the live object; true → Healthy, false → Progressing. */
  healthy: string;
  /** Optional CEL; true → Degraded (evaluated before `healthy`). */
  degraded?: string;
}

/** A live object as plain JSON. */
export type KubeObject = Record<string, unknown>;

/** A built-in rule: a pure function of the live object. */
export type HealthRule = (live: KubeObject) => ObjectHealth;
