import { describe, expect, it } from 'vitest';
import { RenderError } from '../../../domain/render/errors.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import { planWaves, syncWave } from '../../../domain/render/order.ts';

const obj = (
  apiVersion: string,
  kind: string,
  name: string,
  wave?: string,
  namespace = 'ns',
): KubeObject => ({
  apiVersion,
  kind,
  metadata: {
    name,
    namespace,
    ...(wave === undefined ? {} : { annotations: { 'convoy.dev/sync-wave': wave } }),
  },
});

const names = (objects: KubeObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`);

describe('sync waves', () => {
  it('defaults to wave 0; negative waves come first', () => {
    const waves = planWaves([
      obj('v1', 'ConfigMap', 'zero'),
      obj('v1', 'ConfigMap', 'two', '2'),
      obj('v1', 'ConfigMap', 'minus', '-1'),
    ]);
    expect(waves.map((w) => w.wave)).toEqual([-1, 0, 2]);
    expect(waves.map((w) => names(w.objects))).toEqual([
      ['ConfigMap/minus'],
      ['ConfigMap/zero'],
      ['ConfigMap/two'],
    ]);
  });

  it('reads "+3", " 4 " and "-0" as integers', () => {
    expect(syncWave(obj('v1', 'ConfigMap', 'a', '+3'))).toBe(3);
    expect(syncWave(obj('v1', 'ConfigMap', 'a', ' 4 '))).toBe(4);
    expect(Object.is(syncWave(obj('v1', 'ConfigMap', 'a', '-0')), 0)).toBe(true);
  });

  it('a non-integer wave annotation is a RenderError naming the object', () => {
    for (const bad of ['abc', '1.5', '', '1e3', '99999999999999999999']) {
      expect(() => planWaves([obj('apps/v1', 'Deployment', 'web', bad, 'team-a')])).toThrow(RenderError);
    }
    expect(() => planWaves([obj('apps/v1', 'Deployment', 'web', 'early', 'team-a')])).toThrow(
      'Deployment team-a/web: annotation convoy.dev/sync-wave is "early", not an integer; use a whole number such as "-1", "0" or "2"',
    );
  });
});

describe('kind order within a wave', () => {
  it('Namespace, CRD, ServiceAccount, RBAC, ConfigMap/Secret, Service, workloads, the rest', () => {
    const shuffled = [
      obj('networking.k8s.io/v1', 'Ingress', 'a'),
      obj('apps/v1', 'Deployment', 'a'),
      obj('v1', 'Service', 'a'),
      obj('v1', 'Secret', 'b'),
      obj('v1', 'ConfigMap', 'a'),
      obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'a'),
      obj('rbac.authorization.k8s.io/v1', 'Role', 'a'),
      obj('v1', 'ServiceAccount', 'a'),
      obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'a', undefined, ''),
      obj('v1', 'Namespace', 'a', undefined, ''),
      obj('batch/v1', 'CronJob', 'a'),
      obj('example.com/v1', 'Service', 'custom'),
    ];
    const [wave] = planWaves(shuffled);
    expect(names(wave?.objects ?? [])).toEqual([
      'Namespace/a',
      'CustomResourceDefinition/a',
      'ServiceAccount/a',
      'Role/a',
      'RoleBinding/a',
      'ConfigMap/a',
      'Secret/b',
      'Service/a',
      'Deployment/a', // same rank, namespace and name: group apps < batch
      'CronJob/a',
      'Ingress/a',
      'Service/custom',
    ]);
  });

  it('then namespace, then name', () => {
    const [wave] = planWaves([
      obj('v1', 'ConfigMap', 'b', undefined, 'x'),
      obj('v1', 'ConfigMap', 'a', undefined, 'y'),
      obj('v1', 'ConfigMap', 'a', undefined, 'x'),
    ]);
    expect(wave?.objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'x/a',
      'x/b',
      'y/a',
    ]);
  });

  it('orders each wave separately', () => {
    const waves = planWaves([
      obj('apps/v1', 'Deployment', 'db', '-1'),
      obj('v1', 'Namespace', 'late', '1', ''),
      obj('v1', 'ConfigMap', 'cfg', '-1'),
    ]);
    expect(waves.map((w) => [w.wave, names(w.objects)])).toEqual([
      [-1, ['ConfigMap/cfg', 'Deployment/db']],
      [1, ['Namespace/late']],
    ]);
  });
});
