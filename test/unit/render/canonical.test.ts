import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  canonicalRender,
  renderRef,
  sortObjectsByIdentity,
} from '../../../domain/render/canonical.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';

const deploy: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team-a', labels: { b: '2', a: '1' } },
  spec: { replicas: 2, template: { spec: { containers: [{ name: 'web', image: 'web:1' }] } } },
};
const service: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'team-a' },
  spec: { ports: [{ port: 80 }] },
};
const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } };

/** The same object with every mapping's keys in reverse order. */
function reverseKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reverseKeys) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reverseKeys(v)]),
    ) as T;
  }
  return value;
}

describe('canonicalJson', () => {
  it('sorts keys recursively and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null }, é: 'x', B: true })).toBe(
      '{"B":true,"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1,"é":"x"}',
    );
  });

  it('leaves out undefined properties, as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
  });

  it('refuses what is not JSON data', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ a: () => 1 })).toThrow(TypeError);
  });
});

describe('renderRef', () => {
  it('is sha256: and 64 hex digits', () => {
    expect(renderRef([deploy, service])).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('is stable under reordering of the objects', () => {
    const ref = renderRef([deploy, service, namespace]);
    expect(renderRef([namespace, deploy, service])).toBe(ref);
    expect(renderRef([service, namespace, deploy])).toBe(ref);
  });

  it('is stable under key order inside the objects', () => {
    expect(renderRef([reverseKeys(deploy), reverseKeys(service)])).toBe(renderRef([deploy, service]));
  });

  it('changes when any value changes', () => {
    const changed = { ...deploy, spec: { ...(deploy.spec as object), replicas: 3 } };
    expect(renderRef([changed, service])).not.toBe(renderRef([deploy, service]));
  });

  it('sorts by identity: group, kind, namespace, name', () => {
    const sorted = sortObjectsByIdentity([deploy, service, namespace]);
    expect(sorted.map((o) => `${o.apiVersion}/${o.kind}`)).toEqual([
      'v1/Namespace',
      'v1/Service',
      'apps/v1/Deployment',
    ]);
  });

  it('hashes exactly the canonical JSON of the sorted list', async () => {
    const { createHash } = await import('node:crypto');
    const canonical = canonicalRender([deploy, namespace]);
    expect(canonical.json).toBe(canonicalJson(sortObjectsByIdentity([deploy, namespace])));
    expect(canonical.renderRef).toBe(`sha256:${createHash('sha256').update(canonical.json).digest('hex')}`);
  });
});
