import { describe, expect, it } from 'vitest';
import { compileChecks, healthIsExistence } from '../../../domain/health/index.ts';

const obj = (apiVersion: string, kind: string, spec?: Record<string, unknown>) => ({
  apiVersion,
  kind,
  metadata: { name: 'x' },
  ...(spec ? { spec } : {}),
});
const none = compileChecks([]).compiled;

/** Each `[apiVersion, kind]` is (or is not) existence-only with no checks. */
function expectEach(kinds: readonly (readonly [string, string])[], expected: boolean): void {
  for (const [apiVersion, kind] of kinds)
    expect(healthIsExistence(obj(apiVersion, kind), none), `${apiVersion} ${kind}`).toBe(expected);
}

describe('kinds whose health is their existence (the rollout recheck does not read them again)', () => {
  it('status-less kinds: ConfigMap, Secret, ServiceAccount, RBAC, NetworkPolicy, PriorityClass, StorageClass, IngressClass, LimitRange', () => {
    expectEach(
      [
        ['v1', 'ConfigMap'],
        ['v1', 'Secret'],
        ['v1', 'ServiceAccount'],
        ['v1', 'LimitRange'],
        ['rbac.authorization.k8s.io/v1', 'Role'],
        ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
        ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
        ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
        ['networking.k8s.io/v1', 'NetworkPolicy'],
        ['networking.k8s.io/v1', 'IngressClass'],
        ['scheduling.k8s.io/v1', 'PriorityClass'],
        ['storage.k8s.io/v1', 'StorageClass'],
      ],
      true,
    );
  });

  it('a Service unless it is of type LoadBalancer (its address comes later)', () => {
    expect(healthIsExistence(obj('v1', 'Service', { ports: [{ port: 80 }] }), none)).toBe(true);
    expect(healthIsExistence(obj('v1', 'Service', { type: 'NodePort' }), none)).toBe(true);
    expect(healthIsExistence(obj('v1', 'Service', { type: 'LoadBalancer' }), none)).toBe(false);
  });

  it('never a kind a controller reports on, a custom resource, a Namespace (it can be Terminating) or an object without apiVersion/kind', () => {
    expectEach(
      [
        ['apps/v1', 'Deployment'],
        ['apps/v1', 'StatefulSet'],
        ['batch/v1', 'Job'],
        ['v1', 'Pod'],
        ['v1', 'PersistentVolumeClaim'],
        ['v1', 'Namespace'],
        ['networking.k8s.io/v1', 'Ingress'],
        ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
        ['policy/v1', 'PodDisruptionBudget'],
        ['example.com/v1', 'ConfigMap'],
        ['cert-manager.io/v1', 'Certificate'],
      ],
      false,
    );
    expect(healthIsExistence({ metadata: { name: 'x' } }, none)).toBe(false);
  });

  it('never a kind a healthAssessment check names: its verdict may read anything in the object', () => {
    const checks = compileChecks([
      { apiVersion: 'v1', kind: 'ConfigMap', healthy: 'has(object.data)' },
    ]).compiled;
    expect(healthIsExistence(obj('v1', 'ConfigMap'), checks)).toBe(false);
    expect(healthIsExistence(obj('v1', 'ServiceAccount'), checks)).toBe(true);
  });
});
