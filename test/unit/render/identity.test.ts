import { describe, expect, it } from 'vitest';
import { RenderError } from '../../../domain/render/errors.ts';
import { assertNoDuplicates, objectKey } from '../../../domain/render/identity.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import { applyTargetNamespace } from '../../../domain/render/target-namespace.ts';

const obj = (apiVersion: string, kind: string, name: string, namespace?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: namespace === undefined ? { name } : { name, namespace },
});

const crd = (group: string, kind: string, scope: 'Cluster' | 'Namespaced'): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${kind.toLowerCase()}s.${group}` },
  spec: { group, scope, names: { kind, plural: `${kind.toLowerCase()}s` } },
});

describe('objectKey', () => {
  it('is group/kind/namespace/name, the core group empty', () => {
    expect(objectKey(obj('apps/v1', 'Deployment', 'web', 'a'), 'd')).toBe('apps/Deployment/a/web');
    expect(objectKey(obj('v1', 'ConfigMap', 'cfg'), 'd')).toBe('/ConfigMap/d/cfg');
  });

  it('gives cluster-scoped objects no namespace, even when they carry one', () => {
    expect(objectKey(obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'r', 'x'), 'd')).toBe(
      'rbac.authorization.k8s.io/ClusterRole//r',
    );
    expect(objectKey(obj('v1', 'Namespace', 'team-a'), 'd')).toBe('/Namespace//team-a');
  });

  it('ignores the API version', () => {
    expect(objectKey(obj('autoscaling/v1', 'HorizontalPodAutoscaler', 'h'), 'd')).toBe(
      objectKey(obj('autoscaling/v2', 'HorizontalPodAutoscaler', 'h'), 'd'),
    );
  });

  it('asks the resolver about kinds it knows', () => {
    const resolver = (group: string, kind: string) =>
      group === 'example.com' && kind === 'Tenant' ? false : undefined;
    expect(objectKey(obj('example.com/v1', 'Tenant', 't'), 'd', resolver)).toBe('example.com/Tenant//t');
    expect(objectKey(obj('example.com/v1', 'Other', 'o'), 'd', resolver)).toBe('example.com/Other/d/o');
  });
});

describe('assertNoDuplicates', () => {
  it('accepts distinct objects, the same name in another kind or namespace', () => {
    expect(() =>
      assertNoDuplicates([
        obj('v1', 'ConfigMap', 'x', 'a'),
        obj('v1', 'ConfigMap', 'x', 'b'),
        obj('v1', 'Secret', 'x', 'a'),
      ]),
    ).not.toThrow();
  });

  it('names both occurrences of a duplicate', () => {
    const objects = [
      obj('v1', 'ConfigMap', 'x', 'a'),
      obj('v1', 'Secret', 'y', 'a'),
      obj('v1', 'ConfigMap', 'x', 'a'),
    ];
    expect(() => assertNoDuplicates(objects)).toThrow(RenderError);
    expect(() => assertNoDuplicates(objects)).toThrow(
      'ConfigMap a/x appears twice in the render (object 1 of the render and object 3 of the render); ' +
        'remove one of them, or give them different names or namespaces',
    );
    expect(() => assertNoDuplicates(objects, { describe: (i) => `file${i}.yaml` })).toThrow(
      /\(file0\.yaml and file2\.yaml\)/,
    );
  });

  it('counts a missing namespace as the default namespace', () => {
    const objects = [obj('v1', 'ConfigMap', 'x'), obj('v1', 'ConfigMap', 'x', 'team-a')];
    expect(() => assertNoDuplicates(objects, { defaultNamespace: 'team-a' })).toThrow(/appears twice/);
    expect(() => assertNoDuplicates(objects, { defaultNamespace: 'other' })).not.toThrow();
  });
});

describe('applyTargetNamespace', () => {
  it('sets the target namespace on namespaced objects that lack one', () => {
    const input = [
      obj('v1', 'ConfigMap', 'a'),
      obj('apps/v1', 'Deployment', 'b', 'keep'),
      obj('v1', 'Service', 'c', ''),
    ];
    const out = applyTargetNamespace(input, 'team-a');
    expect(out.map((o) => o.metadata.namespace)).toEqual(['team-a', 'keep', 'team-a']);
    expect(input[0]?.metadata.namespace).toBeUndefined(); // inputs are not changed
  });

  it('leaves cluster-scoped kinds without a namespace and drops one they carry', () => {
    const kinds: [string, string][] = [
      ['v1', 'Namespace'],
      ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
      ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
      ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
      ['v1', 'PersistentVolume'],
      ['storage.k8s.io/v1', 'StorageClass'],
      ['scheduling.k8s.io/v1', 'PriorityClass'],
      ['apiregistration.k8s.io/v1', 'APIService'],
      ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'],
      ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'],
      ['networking.k8s.io/v1', 'IngressClass'],
      ['node.k8s.io/v1', 'RuntimeClass'],
      ['storage.k8s.io/v1', 'CSIDriver'],
      ['storage.k8s.io/v1', 'VolumeAttachment'],
    ];
    const out = applyTargetNamespace(
      kinds.map(([v, k]) => obj(v, k, 'x', 'stray')),
      'team-a',
    );
    expect(out.every((o) => !('namespace' in o.metadata))).toBe(true);
  });

  it('takes the scope of custom resources from CRDs in the render', () => {
    const out = applyTargetNamespace(
      [
        crd('example.com', 'Tenant', 'Cluster'),
        crd('example.com', 'Db', 'Namespaced'),
        obj('example.com/v1', 'Tenant', 't'),
        obj('example.com/v1', 'Db', 'd'),
      ],
      'team-a',
    );
    expect(out.map((o) => o.metadata.namespace)).toEqual([undefined, undefined, undefined, 'team-a']);
  });

  it('takes the scope from the resolver before the built-in list', () => {
    const out = applyTargetNamespace([obj('example.com/v1', 'Tenant', 't')], 'team-a', () => false);
    expect(out[0]?.metadata.namespace).toBeUndefined();
  });

  it('does not treat a custom kind that reuses a built-in name as built-in', () => {
    const out = applyTargetNamespace([obj('example.com/v1', 'Namespace', 'n')], 'team-a');
    expect(out[0]?.metadata.namespace).toBe('team-a');
  });
});
