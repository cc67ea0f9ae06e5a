import { describe, expect, it } from 'vitest';
import { RenderError, UnsupportedRenderError } from '../../../domain/render/errors.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import { applyMutations } from '../../../domain/render/mutations.ts';
import type { MutationInput, MutationPatch } from '../../../domain/render/mutations.ts';

const deployment = (): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team-a', labels: { app: 'web' } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        initContainers: [{ name: 'init', image: 'busybox:1.36' }],
        containers: [
          { name: 'web', image: 'ghcr.io/org/podinfo:6.7.0' },
          { name: 'sidecar', image: 'localhost:5000/proxy@sha256:aaa' },
        ],
      },
    },
  },
});
const cronJob = (): KubeObject => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly', namespace: 'team-a' },
  spec: {
    schedule: '@daily',
    jobTemplate: {
      spec: { template: { spec: { containers: [{ name: 'c', image: 'ghcr.io/org/podinfo' }] } } },
    },
  },
});
const pod = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'team-a', labels: { tier: 'debug' } },
  spec: { containers: [{ name: 'c', image: 'ghcr.io/org/podinfo:1' }] },
});
const service = (): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'team-a' },
  spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
});
const configMap = (name = 'cfg', namespace = 'team-a'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data: { a: '1' },
});

const mutation = (name: string, spec: Partial<MutationInput['spec']>, generation = 1): MutationInput => ({
  name,
  generation,
  spec: { order: 100, ...spec },
});

const patch = (
  target: MutationPatch['target'],
  type: MutationPatch['type'],
  value: unknown,
): MutationPatch => ({ target, type, patch: value });

const jsonPatch = (obj: KubeObject, ops: unknown[]) =>
  applyMutations([obj], [mutation('m', { patches: [patch({ kind: obj.kind }, 'JSON6902', ops)] })])
    .objects[0];

function errorOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}

describe('applyMutations', () => {
  it('commonLabels: on every object and on pod templates, never on selectors', () => {
    const { objects } = applyMutations(
      [deployment(), service(), cronJob()],
      [mutation('labels', { commonLabels: { team: 'a', app: 'web' } })],
    );
    const [dep, svc, cron] = objects as [KubeObject, KubeObject, KubeObject];
    expect(dep.metadata.labels).toEqual({ app: 'web', team: 'a' });
    expect(dep.spec).toMatchObject({
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web', team: 'a' } } },
    });
    expect((dep.spec as { selector: object }).selector).toEqual({ matchLabels: { app: 'web' } });
    expect(svc.metadata.labels).toEqual({ team: 'a', app: 'web' });
    expect(svc.spec).toEqual({ selector: { app: 'web' }, ports: [{ port: 80 }] });
    expect(cron.spec).toMatchObject({
      jobTemplate: {
        metadata: { labels: { team: 'a' } },
        spec: { template: { metadata: { labels: { team: 'a' } } } },
      },
    });
  });

  it('commonLabels override a label of the same key', () => {
    const { objects } = applyMutations([pod()], [mutation('m', { commonLabels: { tier: 'prod' } })]);
    expect(objects[0]?.metadata.labels).toEqual({ tier: 'prod' });
  });

  it('commonAnnotations: on metadata only', () => {
    const { objects } = applyMutations(
      [deployment()],
      [mutation('m', { commonAnnotations: { 'example.com/owner': 'team-a' } })],
    );
    expect(objects[0]?.metadata.annotations).toEqual({ 'example.com/owner': 'team-a' });
    expect((objects[0]?.spec as { template: { metadata: object } }).template.metadata).toEqual({
      labels: { app: 'web' },
    });
  });

  it('images: newTag replaces the tag in containers, init containers, CronJobs and Pods', () => {
    const { objects } = applyMutations(
      [deployment(), cronJob(), pod()],
      [
        mutation('m', {
          images: [
            { name: 'ghcr.io/org/podinfo', newTag: '6.7.1' },
            { name: 'busybox', newTag: '1.37' },
          ],
        }),
      ],
    );
    const [dep, cron, p] = objects as [KubeObject, KubeObject, KubeObject];
    expect(dep.spec).toMatchObject({
      template: {
        spec: {
          initContainers: [{ image: 'busybox:1.37' }],
          containers: [{ image: 'ghcr.io/org/podinfo:6.7.1' }, { image: 'localhost:5000/proxy@sha256:aaa' }],
        },
      },
    });
    expect(cron.spec).toMatchObject({
      jobTemplate: { spec: { template: { spec: { containers: [{ image: 'ghcr.io/org/podinfo:6.7.1' }] } } } },
    });
    expect(p.spec).toEqual({ containers: [{ name: 'c', image: 'ghcr.io/org/podinfo:6.7.1' }] });
  });

  it('images: digest replaces tag and digest; newName keeps the tag; registry ports are not tags', () => {
    const { objects } = applyMutations(
      [deployment()],
      [
        mutation('m', {
          images: [
            { name: 'ghcr.io/org/podinfo', digest: 'sha256:bbb' },
            { name: 'localhost:5000/proxy', newName: 'registry.example.com/proxy' },
          ],
        }),
      ],
    );
    expect(objects[0]?.spec).toMatchObject({
      template: {
        spec: {
          containers: [
            { image: 'ghcr.io/org/podinfo@sha256:bbb' },
            { image: 'registry.example.com/proxy@sha256:aaa' },
          ],
        },
      },
    });
    const both = applyMutations(
      [pod()],
      [
        mutation('m', {
          images: [
            { name: 'ghcr.io/org/podinfo', newName: 'mirror/podinfo', newTag: '2', digest: 'sha256:ccc' },
          ],
        }),
      ],
    );
    expect(both.objects[0]?.spec).toEqual({
      containers: [{ name: 'c', image: 'mirror/podinfo:2@sha256:ccc' }],
    });
  });

  it('images: a different name with the same prefix is not matched', () => {
    const { objects } = applyMutations(
      [pod()],
      [mutation('m', { images: [{ name: 'ghcr.io/org/pod', newTag: 'x' }] })],
    );
    expect(objects[0]?.spec).toEqual(pod().spec);
  });

  it('JSON6902 add (object member, array index, array end)', () => {
    const out = jsonPatch(deployment(), [
      { op: 'add', path: '/spec/paused', value: true },
      { op: 'add', path: '/spec/template/spec/containers/0', value: { name: 'first', image: 'x' } },
      { op: 'add', path: '/spec/template/spec/containers/-', value: { name: 'last', image: 'y' } },
      { op: 'add', path: '/metadata/annotations', value: { 'a~b/c': '1' } },
    ]);
    expect(out?.spec).toMatchObject({ paused: true });
    expect(
      (out?.spec as { template: { spec: { containers: { name: string }[] } } }).template.spec.containers.map(
        (c) => c.name,
      ),
    ).toEqual(['first', 'web', 'sidecar', 'last']);
    expect(out?.metadata.annotations).toEqual({ 'a~b/c': '1' });
  });

  it('JSON6902 remove, with ~0 and ~1 escapes', () => {
    const obj = { ...configMap(), data: { 'a/b': '1', 'c~d': '2', keep: '3' } };
    const out = jsonPatch(obj, [
      { op: 'remove', path: '/data/a~1b' },
      { op: 'remove', path: '/data/c~0d' },
    ]);
    expect(out?.data).toEqual({ keep: '3' });
  });

  it('JSON6902 replace', () => {
    expect(
      jsonPatch(deployment(), [{ op: 'replace', path: '/spec/replicas', value: 3 }])?.spec,
    ).toMatchObject({ replicas: 3 });
  });

  it('JSON6902 move', () => {
    const out = jsonPatch(configMap(), [{ op: 'move', from: '/data/a', path: '/data/b' }]);
    expect(out?.data).toEqual({ b: '1' });
  });

  it('JSON6902 copy', () => {
    const out = jsonPatch(configMap(), [{ op: 'copy', from: '/data', path: '/binaryData' }]);
    expect(out?.data).toEqual({ a: '1' });
    expect(out?.binaryData).toEqual({ a: '1' });
    expect(out?.binaryData).not.toBe(out?.data);
  });

  it('JSON6902 test that passes', () => {
    const out = jsonPatch(deployment(), [
      { op: 'test', path: '/spec/replicas', value: 2 },
      { op: 'replace', path: '/spec/replicas', value: 5 },
    ]);
    expect(out?.spec).toMatchObject({ replicas: 5 });
  });

  it('JSON6902 a failing test op is a RenderError naming the mutation, patch and object', () => {
    const error = errorOf(() =>
      applyMutations(
        [configMap(), deployment()],
        [
          mutation('scale', {
            patches: [
              patch({ kind: 'ConfigMap' }, 'Merge', { data: { b: '2' } }),
              patch({ kind: 'Deployment' }, 'JSON6902', [
                { op: 'test', path: '/spec/replicas', value: 9 },
                { op: 'remove', path: '/spec/replicas' },
              ]),
            ],
          }),
        ],
      ),
    );
    expect(error).toBeInstanceOf(RenderError);
    expect(error.message).toBe(
      'Mutation "scale" spec.patches[1] (JSON6902) on Deployment team-a/web: operation 1 (test /spec/replicas) failed: ' +
        'the value at "/spec/replicas" is not the expected value',
    );
    expect((error as RenderError).mutation).toBe('scale');
    expect((error as RenderError).object).toBe('Deployment team-a/web');
  });

  it('JSON6902 failing ops: missing path, bad index, bad pointer, remove root', () => {
    const fails = (ops: unknown) => errorOf(() => jsonPatch(deployment(), ops as unknown[])).message;
    expect(fails([{ op: 'replace', path: '/spec/nope', value: 1 }])).toContain(
      'operation 1 (replace /spec/nope) failed: /spec/nope does not exist',
    );
    expect(fails([{ op: 'add', path: '/spec/template/spec/containers/9', value: {} }])).toContain(
      'index 9 is out of bounds',
    );
    expect(fails([{ op: 'add', path: '/a/b', value: 1 }])).toContain('the parent of /a/b does not exist');
    expect(fails([{ op: 'remove', path: 'spec' }])).toContain('is not a JSON pointer');
    expect(fails([{ op: 'move', from: '/spec', path: '/spec/x' }])).toContain(
      'cannot move /spec into its own child /spec/x',
    );
    expect(fails([{ op: 'remove', path: '/kind' }])).toContain(
      'the patched object is no longer valid: missing kind',
    );
    expect(fails([{ op: 'frobnicate', path: '/x' }])).toContain('"op" must be one of');
    expect(fails({ op: 'add' })).toContain('must be a list of operations');
  });

  it('JSON6902 patch given as YAML text', () => {
    const { objects } = applyMutations(
      [deployment()],
      [
        mutation('m', {
          patches: [
            patch({ kind: 'Deployment' }, 'JSON6902', '- op: replace\n  path: /spec/replicas\n  value: 4\n'),
          ],
        }),
      ],
    );
    expect(objects[0]?.spec).toMatchObject({ replicas: 4 });
  });

  it('Merge patch: maps merge, null removes, lists are replaced', () => {
    const { objects } = applyMutations(
      [deployment()],
      [
        mutation('m', {
          patches: [
            patch({ kind: 'Deployment', name: 'web' }, 'Merge', {
              metadata: { labels: { app: null, tier: 'web' } },
              spec: { replicas: 1, template: { spec: { initContainers: [] } } },
            }),
          ],
        }),
      ],
    );
    const out = objects[0];
    expect(out?.metadata.labels).toEqual({ tier: 'web' });
    expect(out?.spec).toMatchObject({
      replicas: 1,
      template: { spec: { initContainers: [], containers: [{ name: 'web' }, { name: 'sidecar' }] } },
    });
  });

  it('Merge patch must be a mapping', () => {
    expect(() => applyMutations([pod()], [mutation('m', { patches: [patch({}, 'Merge', [1])] })])).toThrow(
      'Mutation "m" spec.patches[0]: a Merge patch must be a mapping',
    );
  });

  it('StrategicMerge is unsupported, naming the mutation', () => {
    const error = errorOf(() =>
      applyMutations(
        [deployment()],
        [
          mutation('smp', {
            patches: [patch({ kind: 'Deployment' }, 'StrategicMerge', { spec: { replicas: 1 } })],
          }),
        ],
      ),
    );
    expect(error).toBeInstanceOf(UnsupportedRenderError);
    expect(error).not.toBeInstanceOf(RenderError);
    expect(error.message).toContain('Mutation "smp" spec.patches[0]: type StrategicMerge is not supported');
    expect((error as UnsupportedRenderError).feature).toBe('StrategicMergePatch');
    expect((error as UnsupportedRenderError).retryable).toBe(false);
  });

  it('selects targets by group, version, kind, name, namespace and labelSelector', () => {
    const objects = [deployment(), service(), pod(), configMap('cfg', 'team-a'), configMap('cfg', 'team-b')];
    const annotate = (target: MutationPatch['target']) =>
      applyMutations(objects, [
        mutation('m', { patches: [patch(target, 'Merge', { metadata: { annotations: { hit: 'yes' } } })] }),
      ])
        .objects.filter((o) => o.metadata.annotations?.hit === 'yes')
        .map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`);
    expect(annotate({ kind: 'Deployment' })).toEqual(['Deployment/team-a/web']);
    expect(annotate({ name: 'web' })).toEqual(['Deployment/team-a/web', 'Service/team-a/web']);
    expect(annotate({ group: 'apps' })).toEqual(['Deployment/team-a/web']);
    expect(annotate({ version: 'v1' })).toEqual([
      'Deployment/team-a/web',
      'Service/team-a/web',
      'Pod/team-a/p',
      'ConfigMap/team-a/cfg',
      'ConfigMap/team-b/cfg',
    ]);
    expect(annotate({ kind: 'ConfigMap', namespace: 'team-b' })).toEqual(['ConfigMap/team-b/cfg']);
    expect(annotate({ labelSelector: 'app=web' })).toEqual(['Deployment/team-a/web']);
    expect(annotate({ labelSelector: 'tier==debug,app!=web' })).toEqual(['Pod/team-a/p']);
    expect(annotate({ kind: 'Secret' })).toEqual([]);
    expect(annotate({})).toHaveLength(5);
  });

  it('a set-based labelSelector is unsupported', () => {
    expect(() =>
      applyMutations(
        [pod()],
        [mutation('m', { patches: [patch({ labelSelector: 'tier in (a,b)' }, 'Merge', {})] })],
      ),
    ).toThrow(UnsupportedRenderError);
  });

  it('applies mutations by order, then name, and reports them in that order', () => {
    const result = applyMutations(
      [configMap()],
      [
        mutation('b-late', { order: 200, patches: [patch({}, 'Merge', { data: { who: 'b-late' } })] }, 7),
        mutation('z-first', { order: 10, patches: [patch({}, 'Merge', { data: { who: 'z-first' } })] }, 3),
        mutation(
          'a-mid',
          {
            order: 100,
            patches: [
              patch({}, 'JSON6902', [
                { op: 'test', path: '/data/who', value: 'z-first' },
                { op: 'replace', path: '/data/who', value: 'a-mid' },
              ]),
            ],
          },
          1,
        ),
        mutation(
          'c-mid',
          {
            order: 100,
            patches: [patch({}, 'JSON6902', [{ op: 'test', path: '/data/who', value: 'a-mid' }])],
          },
          2,
        ),
      ],
    );
    expect(result.objects[0]?.data).toEqual({ a: '1', who: 'b-late' });
    expect(result.resolved).toEqual([
      { name: 'z-first', generation: 3 },
      { name: 'a-mid', generation: 1 },
      { name: 'c-mid', generation: 2 },
      { name: 'b-late', generation: 7 },
    ]);
  });

  it('never changes its inputs', () => {
    const input = [deployment(), configMap()];
    const before = structuredClone(input);
    const value = { nested: { x: 1 } };
    const { objects } = applyMutations(input, [
      mutation('m', {
        commonLabels: { a: 'b' },
        images: [{ name: 'busybox', newTag: '2' }],
        patches: [
          patch({ kind: 'ConfigMap' }, 'JSON6902', [{ op: 'add', path: '/extra', value }]),
          patch({ kind: 'Deployment' }, 'Merge', { spec: { replicas: 9 } }),
        ],
      }),
    ]);
    expect(input).toEqual(before);
    (objects[1]?.extra as { nested: { x: number } }).nested.x = 2;
    expect(value.nested.x).toBe(1);
  });
});
