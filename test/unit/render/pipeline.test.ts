import { describe, expect, it } from 'vitest';
import { isPruneDisabled } from '../../../domain/render/annotations.ts';
import { renderRef } from '../../../domain/render/canonical.ts';
import { RenderError } from '../../../domain/render/errors.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import { finishRender } from '../../../domain/render/pipeline.ts';

const cm = (name: string, namespace?: string, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(namespace ? { namespace } : {}), ...(annotations ? { annotations } : {}) },
});

describe('finishRender', () => {
  it('applies the target namespace, then mutations, and addresses the result', () => {
    const result = finishRender({
      objects: [
        cm('b', undefined, { 'convoy.dev/sync-wave': '1' }),
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } },
        cm('a'),
      ],
      targetNamespace: 'team-a',
      mutations: [
        {
          name: 'only-team-a',
          generation: 4,
          spec: {
            order: 1,
            patches: [
              {
                target: { kind: 'ConfigMap', namespace: 'team-a' },
                type: 'Merge',
                patch: { data: { hit: 'yes' } },
              },
            ],
          },
        },
      ],
    });
    expect(result.objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      'ConfigMap/team-a/a',
      'ConfigMap/team-a/b',
      'Namespace//team-a',
    ]);
    expect(
      result.objects
        .filter((o) => o.kind === 'ConfigMap')
        .every((o) => (o.data as { hit: string }).hit === 'yes'),
    ).toBe(true);
    expect(result.waves.map((w) => [w.wave, w.objects.map((o) => o.metadata.name)])).toEqual([
      [0, ['team-a', 'a']],
      [1, ['b']],
    ]);
    expect(result.renderRef).toBe(renderRef(result.objects));
    expect(result.json).toBe(JSON.stringify(JSON.parse(result.json)));
    expect(result.resolvedMutations).toEqual([{ name: 'only-team-a', generation: 4 }]);
  });

  it('finds duplicates that appear only once the target namespace is set', () => {
    expect(() => finishRender({ objects: [cm('a'), cm('a', 'team-a')], targetNamespace: 'team-a' })).toThrow(
      RenderError,
    );
    expect(() => finishRender({ objects: [cm('a'), cm('a', 'team-a')], targetNamespace: 'team-a' })).toThrow(
      /ConfigMap team-a\/a appears twice/,
    );
  });

  it('refuses a bad wave annotation', () => {
    expect(() =>
      finishRender({ objects: [cm('a', 'x', { 'convoy.dev/sync-wave': 'soon' })], targetNamespace: 'x' }),
    ).toThrow(/ConfigMap x\/a: annotation convoy\.dev\/sync-wave is "soon"/);
  });

  it('the same render in another order has the same renderRef', () => {
    const objects = [cm('a'), cm('b'), cm('c', 'other')];
    const first = finishRender({ objects, targetNamespace: 'n' });
    const second = finishRender({ objects: [...objects].reverse(), targetNamespace: 'n' });
    expect(second.renderRef).toBe(first.renderRef);
    expect(second.json).toBe(first.json);
  });
});

describe('prune annotation', () => {
  it('convoy.dev/prune: disabled marks an object that is never pruned', () => {
    expect(isPruneDisabled(cm('a', 'n', { 'convoy.dev/prune': 'disabled' }))).toBe(true);
    expect(isPruneDisabled(cm('a', 'n', { 'convoy.dev/prune': 'enabled' }))).toBe(false);
    expect(isPruneDisabled(cm('a'))).toBe(false);
  });
});
