import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';

export const NOW = new Date('2026-11-29T10:00:00Z');
export const RENDER_A = `sha256:${'a'.repeat(64)}`;
export const RENDER_B = `sha256:${'b'.repeat(64)}`;

export function attempt(renderRef: string | undefined, attemptedAt = '2026-11-29T09:00:00Z') {
  return { attemptedAt, phase: 'Succeeded', ...(renderRef ? { renderRef } : {}) };
}

/** A parsed Release: `spec` and `status` laid over a minimal valid one. */
export function release(
  spec: Record<string, unknown> = {},
  status: Record<string, unknown> | undefined = undefined,
  generation = 3,
): Release {
  const parsed = parseRelease({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: { name: 'web', namespace: 'team-a', uid: 'u-1', generation },
    spec: {
      cluster: { name: 'local' },
      source: { git: { url: 'https://git.example/apps.git', ref: { branch: 'main' } } },
      ...spec,
    },
    ...(status === undefined ? {} : { status }),
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

/** Applied: lastAttempted and lastSuccessful both name `renderRef`. */
export function appliedStatus(renderRef = RENDER_A, extra: Record<string, unknown> = {}) {
  return { lastAttempted: attempt(renderRef), lastSuccessful: attempt(renderRef), ...extra };
}

export function deployment(name = 'web', extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'team-a' },
    spec: { replicas: 2, selector: { matchLabels: { app: name } } },
    ...extra,
  };
}

export function configMap(name = 'settings'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'team-a' }, data: { k: 'v' } };
}

/** A live Deployment whose rollout is done. */
export function liveDeploymentDone(name = 'web'): Record<string, unknown> {
  return {
    ...deployment(name),
    metadata: { name, namespace: 'team-a', generation: 1 },
    status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2 },
  };
}

/** A live Deployment that has not been observed yet. */
export function liveDeploymentNew(name = 'web'): Record<string, unknown> {
  return { ...deployment(name), metadata: { name, namespace: 'team-a', generation: 1 } };
}
