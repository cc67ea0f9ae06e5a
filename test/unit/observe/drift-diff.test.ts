import { describe, expect, it } from 'vitest';
import {
  comparableForDrift,
  differingPointers,
  driftPaths,
  ignoredPointers,
  objectDrift,
  parsePointer,
} from '../../../domain/observe/drift-diff.ts';
import { configMap, deployment } from './fixtures.ts';

const live = (extra: Record<string, unknown> = {}) => ({
  ...deployment(),
  metadata: {
    name: 'web',
    namespace: 'team-a',
    uid: 'u',
    resourceVersion: '7',
    generation: 4,
    creationTimestamp: '2026-11-29T09:00:00Z',
    managedFields: [{ manager: 'convoy', operation: 'Apply', time: '2026-11-29T09:00:00Z' }],
    annotations: {
      'deployment.kubernetes.io/revision': '3',
      'deprecated.daemonset.template.generation': '1',
    },
  },
  status: { replicas: 2 },
  ...extra,
});

describe('drift diff: the dry-run result against the live object', () => {
  it('server-written fields never count: managedFields, resourceVersion, generation, uid, creationTimestamp, status', () => {
    const merged = {
      ...live(),
      metadata: { ...live().metadata, resourceVersion: '8', generation: 5, managedFields: [] },
      status: { replicas: 3 },
    };
    expect(driftPaths(merged, live())).toEqual([]);
  });

  it('annotations and labels servers and tools add never count', () => {
    const merged = live();
    const other = live();
    (other.metadata as Record<string, unknown>).annotations = {
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
    };
    expect(driftPaths(merged, other)).toEqual([]);
    expect(
      comparableForDrift({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'a', labels: { 'kubernetes.io/metadata.name': 'a' } },
      }),
    ).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'a' },
    });
  });

  it('a changed field is named by its JSON pointer, never its value', () => {
    const merged = live();
    const scaled = live({ spec: { replicas: 5, selector: { matchLabels: { app: 'web' } } } });
    expect(driftPaths(merged, scaled)).toEqual(['/spec/replicas']);
  });

  it('keys with / and ~ are escaped (RFC 6901)', () => {
    expect(
      differingPointers({ metadata: { labels: { 'a/b~c': 'x' } } }, { metadata: { labels: {} } }),
    ).toEqual(['/metadata/labels/a~1b~0c']);
  });

  it('lists of equal length differ item by item; a list whose length changed differs as a whole', () => {
    expect(differingPointers({ l: [1, 2, 3] }, { l: [1, 5, 3] })).toEqual(['/l/1']);
    expect(differingPointers({ l: [1, 2] }, { l: [1, 2, 3] })).toEqual(['/l']);
  });

  it('Secret values never appear in the result', () => {
    const secret = (value: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'team-a' },
      data: { password: value },
    });
    const paths = driftPaths(
      secret(Buffer.from('hunter2-desired').toString('base64')),
      secret(Buffer.from('hunter2-live').toString('base64')),
    );
    expect(paths).toEqual(['/data/password']);
    expect(JSON.stringify(paths)).not.toMatch(/hunter2|aHVudGVy/);
  });

  it('driftDetection.ignore: a matching rule removes its pointers from both sides', () => {
    const rules = [{ kind: 'Deployment', jsonPointers: ['/spec/replicas'] }];
    const ignored = ignoredPointers(deployment(), rules);
    expect(ignored).toEqual(['/spec/replicas']);
    const scaled = live({ spec: { replicas: 5, selector: { matchLabels: { app: 'web' } } } });
    expect(driftPaths(live(), scaled, ignored)).toEqual([]);
  });

  it('driftDetection.ignore: group, kind, name and namespace must each be empty or equal', () => {
    const rule = (r: Record<string, string>) => [{ ...r, jsonPointers: ['/x'] }];
    expect(ignoredPointers(deployment(), rule({ group: 'apps' }))).toEqual(['/x']);
    expect(ignoredPointers(deployment(), rule({ group: '' }))).toEqual(['/x']);
    expect(ignoredPointers(deployment(), rule({ group: 'batch' }))).toEqual([]);
    expect(ignoredPointers(deployment(), rule({ name: 'other' }))).toEqual([]);
    expect(
      ignoredPointers(deployment(), rule({ namespace: 'team-a', name: 'web', kind: 'Deployment' })),
    ).toEqual(['/x']);
    expect(ignoredPointers(configMap(), rule({ kind: 'Deployment' }))).toEqual([]);
  });

  it('an ignore pointer into a list removes the item on both sides; "" ignores the whole object', () => {
    const a = { spec: { containers: [{ name: 'a', image: 'x:1' }] } };
    const b = { spec: { containers: [{ name: 'a', image: 'x:2' }] } };
    expect(driftPaths(a, b, ['/spec/containers/0/image'])).toEqual([]);
    expect(driftPaths(a, b, [''])).toEqual([]);
    expect(driftPaths(a, b, ['/spec/containers/1/image'])).toEqual(['/spec/containers/0/image']);
    const three = (image: string) => ({
      spec: { containers: [{ name: 'a' }, { name: 'b' }, { name: 'c', image }] },
    });
    expect(driftPaths(three('x:1'), three('x:2'), ['/spec/containers/0'])).toEqual([
      '/spec/containers/2/image',
    ]);
    expect(parsePointer('/a~1b/c~0d')).toEqual(['a/b', 'c~d']);
    expect(parsePointer('no-slash')).toBeUndefined();
  });

  it('a missing live object is drift "missing"; a no-op dry run is in sync; a refused dry run cannot be re-applied', () => {
    expect(objectDrift(deployment(), { kind: 'absent' })).toEqual({ state: 'Missing' });
    expect(objectDrift(deployment(), { kind: 'unchanged' })).toEqual({ state: 'InSync' });
    expect(objectDrift(deployment(), { kind: 'refused', message: 'HTTP 422' })).toEqual({
      state: 'Unappliable',
      message: 'HTTP 422',
    });
    const scaled = live({ spec: { replicas: 5, selector: { matchLabels: { app: 'web' } } } });
    expect(objectDrift(deployment(), { kind: 'compared', merged: live(), live: scaled })).toEqual({
      state: 'Drifted',
      paths: ['/spec/replicas'],
    });
    expect(
      objectDrift(deployment(), { kind: 'compared', merged: live(), live: scaled }, [
        { jsonPointers: ['/spec/replicas'] },
      ]),
    ).toEqual({
      state: 'InSync',
    });
  });
});
