import { describe, expect, it } from 'vitest';
import { releaseSetSpecSchema } from '../../../domain/api/release-set.ts';
import { generateChild, unknownField } from '../../../domain/fleet/generate-child.ts';
import { mergePatch } from '../../../domain/fleet/merge-patch.ts';
import { revisionOf, templateHash } from '../../../domain/fleet/revision.ts';
import { substituteString } from '../../../domain/fleet/substitute.ts';
import { cluster, COMMIT_A } from './fleet-fixtures.ts';

const eu = cluster(
  'eu-1',
  { region: 'eu', 'topology.kubernetes.io/zone': 'eu-1a' },
  { 'example.com/owner': 'team-eu' },
);
const set = { name: 'web', namespace: 'fleet', uid: 'u1' };
const revision = revisionOf('sha256:t', { git: { url: 'https://git.example/apps.git', commit: COMMIT_A } });
const spec = (extra: Record<string, unknown> = {}) =>
  releaseSetSpecSchema.parse({
    clusters: { selector: {} },
    template: { spec: { source: { git: { url: 'https://git.example/apps.git', ref: { branch: 'main' } } } } },
    ...extra,
  });

describe('substitution', () => {
  it.each([
    ['${cluster.name}', 'eu-1'],
    ['app-${cluster.labels.region}', 'app-eu'],
    ['${cluster.labels.topology.kubernetes.io/zone}', 'eu-1a'],
    ['${cluster.annotations.example.com/owner}', 'team-eu'],
    ['literal $${cluster.name}', 'literal ${cluster.name}'],
    ['no variables', 'no variables'],
  ])('%s → %s', (text, expected) => {
    expect(substituteString(text, eu, 'f')).toEqual({ ok: true, value: expected });
  });
  it('refuses unknown variables, missing labels and unclosed ${', () => {
    expect(substituteString('${cluster.uid}', eu, 'f')).toMatchObject({ ok: false, field: 'f' });
    expect(JSON.stringify(substituteString('${cluster.uid}', eu, 'f'))).toContain(
      'unknown variable ${cluster.uid}',
    );
    expect(substituteString('${cluster.labels.tier}', eu, 'f')).toMatchObject({
      ok: false,
      message: 'Cluster eu-1 has no label "tier" (${cluster.labels.tier})',
    });
    expect(substituteString('${cluster.annotations.x}', eu, 'f')).toMatchObject({
      ok: false,
      message: 'Cluster eu-1 has no annotation "x" (${cluster.annotations.x})',
    });
    expect(JSON.stringify(substituteString('a ${cluster.name', eu, 'f'))).toContain(
      '"ok":false,"field":"f","message":"unclosed ${',
    );
  });
});

describe('merge patch (spec.overrides)', () => {
  it('merges objects, replaces lists and values, removes with null', () => {
    expect(mergePatch({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, d: null, e: 'x' })).toEqual({
      a: { b: 1, c: [3] },
      e: 'x',
    });
  });
});

describe('generateChild', () => {
  it('applies the overrides that select the Cluster in order (later wins), substitutes, pins the source', () => {
    const s = spec({
      template: {
        metadata: { labels: { app: 'web', region: '${cluster.labels.region}' } },
        spec: {
          targetNamespace: 'web-${cluster.name}',
          syncPolicy: { interval: '10m' },
          source: { git: { url: 'https://git.example/apps.git', path: 'apps/web', ref: { branch: 'main' } } },
        },
      },
      overrides: [
        {
          clusters: { matchLabels: { region: 'eu' } },
          spec: { syncPolicy: { interval: '1m', prune: false } },
        },
        { clusters: { matchLabels: { region: 'us' } }, spec: { syncPolicy: { interval: '2m' } } },
        {
          clusters: { matchExpressions: [{ key: 'region', operator: 'Exists' }] },
          spec: { syncPolicy: { interval: '3m' } },
        },
      ],
    });
    const g = generateChild(set, s, eu, revision, undefined);
    expect(g.ok).toBe(true);
    if (!g.ok) return;
    expect(g.child.metadata).toMatchObject({
      name: 'web-eu-1',
      namespace: 'fleet',
      labels: { app: 'web', region: 'eu', 'convoy.dev/release-set': 'web', 'convoy.dev/cluster': 'eu-1' },
      annotations: { 'convoy.dev/release-set-revision': revision.id },
    });
    expect(g.child.spec).toEqual({
      targetNamespace: 'web-eu-1',
      syncPolicy: { interval: '3m', prune: false },
      cluster: { name: 'eu-1' },
      source: { git: { url: 'https://git.example/apps.git', path: 'apps/web', ref: { commit: COMMIT_A } } },
    });
  });

  it('pins a Helm chart to the resolved version', () => {
    const s = spec({
      template: {
        spec: {
          content: { type: 'Helm' },
          source: { helm: { repository: 'https://charts.example', chart: 'web', version: '1.x' } },
        },
      },
    });
    const g = generateChild(
      set,
      s,
      eu,
      revisionOf('sha256:t', {
        helm: { repository: 'https://charts.example', chart: 'web', version: '1.4.2' },
      }),
      undefined,
    );
    expect(g.ok && g.child.spec['source']).toEqual({
      helm: { repository: 'https://charts.example', chart: 'web', version: '1.4.2' },
    });
  });

  it("refuses a child that is not a valid Release, an unknown field and the set's own labels, naming the field", () => {
    const bad = generateChild(
      set,
      spec({
        template: { spec: { clusterWave: 5000, source: { git: { url: 'u', ref: { branch: 'main' } } } } },
      }),
      eu,
      revision,
      undefined,
    );
    expect(bad).toMatchObject({ ok: false, cluster: 'eu-1', field: 'spec.template.spec.clusterWave' });
    const typo = generateChild(
      set,
      spec({
        template: {
          spec: { syncPolicy: { intervall: '1m' }, source: { git: { url: 'u', ref: { branch: 'main' } } } },
        },
      }),
      eu,
      revision,
      undefined,
    );
    expect(typo).toMatchObject({
      ok: false,
      field: 'spec.template.spec.syncPolicy.intervall',
      message: 'unknown field',
    });
    const reserved = generateChild(
      set,
      spec({
        template: {
          metadata: { labels: { 'convoy.dev/release-set': 'x' } },
          spec: { source: { git: { url: 'u', ref: { branch: 'main' } } } },
        },
      }),
      eu,
      revision,
      undefined,
    );
    expect(reserved).toMatchObject({
      ok: false,
      field: 'spec.template.metadata.labels.convoy.dev/release-set',
    });
    const pin = generateChild(
      set,
      spec({
        template: {
          metadata: { annotations: { 'convoy.dev/pin': 'x' } },
          spec: { source: { git: { url: 'u', ref: { branch: 'main' } } } },
        },
      }),
      eu,
      revision,
      undefined,
    );
    expect(pin).toMatchObject({ ok: false, field: 'spec.template.metadata.annotations.convoy.dev/pin' });
    const label = generateChild(
      set,
      spec({
        template: {
          metadata: { labels: { owner: '${cluster.annotations.example.com/owner} and more' } },
          spec: { source: { git: { url: 'u', ref: { branch: 'main' } } } },
        },
      }),
      eu,
      revision,
      undefined,
    );
    expect(label).toMatchObject({ ok: false, field: 'spec.template.metadata.labels.owner' });
  });

  it('unknownField finds a field the schema dropped', () => {
    expect(unknownField({ a: { b: 1, c: 2 } }, { a: { b: 1 } }, 'spec')).toBe('spec.a.c');
    expect(unknownField({ a: [{ b: 1 }] }, { a: [{ b: 1 }] }, 'spec')).toBeUndefined();
  });
});

describe('revision', () => {
  it('hashes the template and overrides, not key order; the id changes with the source', () => {
    const a = templateHash({
      template: { spec: { source: { git: { url: 'u', ref: { branch: 'main' } } } } },
      overrides: [],
    });
    const b = templateHash({
      template: { spec: { source: { git: { ref: { branch: 'main' }, url: 'u' } } } },
      overrides: undefined,
    });
    expect(a).toBe(b);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    const one = revisionOf(a, { git: { url: 'u', commit: COMMIT_A } });
    const two = revisionOf(a, { git: { url: 'u', commit: 'b'.repeat(40) } });
    expect(one.id).toMatch(/^[0-9a-f]{16}$/);
    expect(one.id).not.toBe(two.id);
  });
});
