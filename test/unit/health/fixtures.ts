/** Builders for live objects as the API server returns them (plain JSON). */
import { assessObject, type AssessOptions, type ObjectHealth } from '../../../domain/health/index.ts';

export const NOW = new Date('2025-01-01T12:00:00Z');

type Json = Record<string, unknown>;

/** Health of `live` with only the built-in rules and no deadline. */
export function assess(live: object | undefined, opts: Partial<AssessOptions> = {}): ObjectHealth {
  return assessObject(live, { now: NOW, ...opts });
}

export function object(apiVersion: string, kind: string, fields: Json = {}, metadata: Json = {}): Json {
  return { apiVersion, kind, metadata: { name: 'demo', namespace: 'default', ...metadata }, ...fields };
}

export function deployment(spec: Json, status: Json, generation = 1): Json {
  return object('apps/v1', 'Deployment', { spec: { replicas: 3, ...spec }, status }, { generation });
}

/** A fully rolled-out Deployment status for 3 replicas. */
export const DEPLOYMENT_DONE: Json = {
  observedGeneration: 1,
  replicas: 3,
  updatedReplicas: 3,
  readyReplicas: 3,
  availableReplicas: 3,
};

export function statefulSet(spec: Json, status: Json, generation = 1): Json {
  return object('apps/v1', 'StatefulSet', { spec: { replicas: 3, ...spec }, status }, { generation });
}

export const STATEFULSET_DONE: Json = {
  observedGeneration: 1,
  replicas: 3,
  readyReplicas: 3,
  currentReplicas: 3,
  updatedReplicas: 3,
  currentRevision: 'web-abc',
  updateRevision: 'web-abc',
};

export function daemonSet(spec: Json, status: Json, generation = 1): Json {
  return object('apps/v1', 'DaemonSet', { spec, status }, { generation });
}

export const DAEMONSET_DONE: Json = {
  observedGeneration: 1,
  desiredNumberScheduled: 3,
  currentNumberScheduled: 3,
  updatedNumberScheduled: 3,
  numberAvailable: 3,
  numberReady: 3,
};

export function replicaSet(spec: Json, status: Json, generation = 1): Json {
  return object('apps/v1', 'ReplicaSet', { spec: { replicas: 3, ...spec }, status }, { generation });
}

export function pod(spec: Json, status: Json): Json {
  return object('v1', 'Pod', { spec: { containers: [{ name: 'app', image: 'app:1' }], ...spec }, status });
}

export function containerWaiting(name: string, reason: string, message = ''): Json {
  return { name, ready: false, restartCount: 0, state: { waiting: { reason, message } } };
}

export function job(spec: Json, status: Json): Json {
  return object('batch/v1', 'Job', { spec, status });
}

export function condition(type: string, status: string, reason = '', message = '', extra: Json = {}): Json {
  return { type, status, reason, message, ...extra };
}

export function withConditions(apiVersion: string, kind: string, conditions: Json[], extra: Json = {}): Json {
  return object(apiVersion, kind, { status: { conditions } }, extra);
}
