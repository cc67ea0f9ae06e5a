import { describe, expect, it } from 'vitest';
import { RenderError } from '../../../domain/render/errors.ts';
import { mergeValues } from '../../../domain/render/helm-values.ts';

describe('mergeValues', () => {
  it('three layers and inline values: later wins, maps merge, null deletes, arrays are replaced', () => {
    const base = {
      replicaCount: 1,
      image: { repository: 'podinfo', tag: '6.7.0', pullPolicy: 'IfNotPresent' },
      tolerations: [{ key: 'a' }, { key: 'b' }],
      debug: { enabled: true },
    };
    const team = { image: { tag: '6.7.1' }, tolerations: [{ key: 'c' }], debug: null };
    const prod = { replicaCount: 3, ingress: { enabled: true, hosts: ['a.example.com'] } };
    const inline = { replicaCount: 2, ingress: { hosts: ['b.example.com'] } };
    const layers = [base, team, prod, inline];
    const snapshot = structuredClone(layers);
    expect(mergeValues(layers)).toEqual({
      replicaCount: 2,
      image: { repository: 'podinfo', tag: '6.7.1', pullPolicy: 'IfNotPresent' },
      tolerations: [{ key: 'c' }],
      // Kept as a tombstone so that helm deletes the chart's default too (see helm.test.ts).
      debug: null,
      ingress: { enabled: true, hosts: ['b.example.com'] },
    });
    expect(layers).toEqual(snapshot);
  });

  it('a later layer can set a deleted key again', () => {
    expect(mergeValues([{ a: { x: 1 } }, { a: null }, { a: { y: 2 } }])).toEqual({ a: { y: 2 } });
  });

  it('a scalar replaces a map and a map replaces a scalar', () => {
    expect(
      mergeValues([
        { a: { x: 1 }, b: 'text' },
        { a: 'off', b: { y: 2 } },
      ]),
    ).toEqual({ a: 'off', b: { y: 2 } });
  });

  it('empty layers are skipped; the result shares nothing with the inputs', () => {
    const layer = { a: { list: [1] } };
    const merged = mergeValues([null, layer, undefined, {}]);
    expect(merged).toEqual(layer);
    (merged.a as { list: number[] }).list.push(2);
    expect(layer.a.list).toEqual([1]);
  });

  it('a layer that is not a mapping is a RenderError', () => {
    expect(() => mergeValues([{}, ['x']])).toThrow(
      new RenderError('Helm values layer 2 is not a mapping of values; check its content'),
    );
  });
});
