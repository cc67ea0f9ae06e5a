import { describe, expect, it } from 'vitest';
import {
  affectedReleases,
  dependencyChangeCounts,
  type DependencyEvent,
  type WatchedObject,
} from '../../../domain/relay/affected-releases.ts';
import { release } from './fixtures.ts';

const names = (event: DependencyEvent, objects: Parameters<typeof affectedReleases>[1]) =>
  affectedReleases(event, objects).map((r) => r.metadata.name);

const object = (
  name: string,
  extra: Partial<WatchedObject> & { generation?: number } = {},
): WatchedObject => ({
  metadata: { name, namespace: 'team-a', generation: extra.generation ?? 1 },
  ...(extra.spec === undefined ? {} : { spec: extra.spec }),
  ...(extra.data === undefined ? {} : { data: extra.data }),
  ...(extra.binaryData === undefined ? {} : { binaryData: extra.binaryData }),
});

const added = (kind: DependencyEvent['kind'], next: WatchedObject): DependencyEvent => ({
  kind,
  old: undefined,
  next,
});

describe('a change of another kind reconciles', () => {
  it('Cluster → the Releases whose spec.cluster.name is that Cluster', () => {
    const releases = [
      release({ name: 'a', spec: { cluster: { name: 'east' } } }),
      release({ name: 'b', spec: { cluster: { name: 'west' } } }),
      release({ name: 'c', spec: { cluster: { name: 'east' } } }),
    ];
    expect(names(added('Cluster', object('east')), { releases })).toEqual(['a', 'c']);
  });

  it('Mutation → the Releases its selector selects, by the old selector and the new one', () => {
    const releases = [
      release({ name: 'prod', labels: { tier: 'prod' } }),
      release({ name: 'dev', labels: { tier: 'dev' } }),
      release({ name: 'none' }),
    ];
    const selecting = (tier: string) => object('m', { spec: { releaseSelector: { matchLabels: { tier } } } });
    expect(names(added('Mutation', selecting('prod')), { releases })).toEqual(['prod']);
    expect(names({ kind: 'Mutation', old: selecting('prod'), next: selecting('dev') }, { releases })).toEqual(
      ['prod', 'dev'],
    );
  });

  it('Mutation with an empty selector → every Release of the namespace', () => {
    const releases = [release({ name: 'a' }), release({ name: 'b', labels: { x: 'y' } })];
    expect(names(added('Mutation', object('m', { spec: {} })), { releases })).toEqual(['a', 'b']);
  });

  it('Mutation whose spec does not parse → every Release (sending too much is safe)', () => {
    const releases = [release({ name: 'a' })];
    expect(names(added('Mutation', object('m', { spec: { releaseSelector: 'bad' } })), { releases })).toEqual(
      ['a'],
    );
  });

  it('Lifecycle → the Releases whose lifecycleRef names it', () => {
    const releases = [
      release({ name: 'a', spec: { lifecycleRef: { name: 'hooks' } } }),
      release({ name: 'b' }),
    ];
    expect(names(added('Lifecycle', object('hooks')), { releases })).toEqual(['a']);
  });

  it('GitRepository → the Releases whose source.gitRepositoryRef or a GitRepository values layer names it', () => {
    const releases = [
      release({ name: 'source', spec: { source: { gitRepositoryRef: { name: 'platform' } } } }),
      release({
        name: 'values',
        spec: {
          content: {
            type: 'Helm',
            helm: { valuesFrom: [{ kind: 'GitRepository', name: 'platform', path: 'values.yaml' }] },
          },
        },
      }),
      release({ name: 'other' }),
    ];
    expect(names(added('GitRepository', object('platform')), { releases })).toEqual(['source', 'values']);
  });

  it('ConfigMap → the Releases with a ConfigMap values layer of that name', () => {
    const releases = [
      release({
        name: 'a',
        spec: { content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'vals' }] } } },
      }),
      release({
        name: 'b',
        spec: { content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'Secret', name: 'vals' }] } } },
      }),
    ];
    expect(names(added('ConfigMap', object('vals')), { releases })).toEqual(['a']);
  });

  it('Secret → values layers, source credentials, Cluster kubeconfigs and GitRepository credentials that name it', () => {
    const releases = [
      release({
        name: 'layer',
        spec: { content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'Secret', name: 's' }] } } },
      }),
      release({
        name: 'git',
        spec: {
          source: { git: { url: 'https://g/x.git', ref: { branch: 'main' }, secretRef: { name: 's' } } },
        },
      }),
      release({
        name: 'helm',
        spec: {
          source: {
            helm: { repository: 'https://c', chart: 'x', version: '1.0.0', secretRef: { name: 's' } },
          },
        },
      }),
      release({ name: 'cluster', spec: { cluster: { name: 'remote' } } }),
      release({ name: 'repo', spec: { source: { gitRepositoryRef: { name: 'platform' } } } }),
      release({ name: 'unrelated' }),
    ];
    const clusters = [object('remote', { spec: { kubeConfig: { secretRef: { name: 's', key: 'value' } } } })];
    const gitRepositories = [
      object('platform', { spec: { url: 'https://g', ref: { branch: 'main' }, secretRef: { name: 's' } } }),
    ];
    expect(names(added('Secret', object('s')), { releases, clusters, gitRepositories })).toEqual([
      'layer',
      'git',
      'helm',
      'cluster',
      'repo',
    ]);
  });

  it('a deleted object → the Releases that named it', () => {
    const releases = [release({ name: 'a', spec: { cluster: { name: 'east' } } })];
    expect(names({ kind: 'Cluster', old: object('east'), next: undefined }, { releases })).toEqual(['a']);
  });
});

describe('an event on another kind counts when', () => {
  it('the object was added or deleted', () => {
    expect(dependencyChangeCounts(added('Cluster', object('c')))).toBe(true);
    expect(dependencyChangeCounts({ kind: 'Cluster', old: object('c'), next: undefined })).toBe(true);
  });

  it('its spec changed (metadata.generation)', () => {
    expect(
      dependencyChangeCounts({
        kind: 'Mutation',
        old: object('m', { generation: 1 }),
        next: object('m', { generation: 2 }),
      }),
    ).toBe(true);
  });

  it('not when only its status or metadata changed (same generation)', () => {
    expect(
      dependencyChangeCounts({
        kind: 'Cluster',
        old: object('c', { generation: 3 }),
        next: object('c', { generation: 3 }),
      }),
    ).toBe(false);
  });

  it('a ConfigMap or Secret: its data changed', () => {
    const before = object('v', { data: { 'values.yaml': 'a: 1' } });
    expect(
      dependencyChangeCounts({
        kind: 'ConfigMap',
        old: before,
        next: object('v', { data: { 'values.yaml': 'a: 2' } }),
      }),
    ).toBe(true);
    expect(
      dependencyChangeCounts({
        kind: 'Secret',
        old: object('s', { data: { k: 'YQ==' } }),
        next: object('s', { data: { k: 'Yg==' } }),
      }),
    ).toBe(true);
    expect(
      dependencyChangeCounts({
        kind: 'ConfigMap',
        old: before,
        next: object('v', { binaryData: { b: 'AA==' }, data: { 'values.yaml': 'a: 1' } }),
      }),
    ).toBe(true);
  });

  it('a ConfigMap or Secret: not when only labels or annotations changed (same data, any key order)', () => {
    const before = object('v', { data: { a: '1', b: '2' } });
    expect(
      dependencyChangeCounts({
        kind: 'ConfigMap',
        old: before,
        next: object('v', { data: { b: '2', a: '1' } }),
      }),
    ).toBe(false);
  });
});
