import { describe, expect, it } from 'vitest';
import { matchesSelector, selectorProblem } from '../../../domain/fleet/selector.ts';
import { selectClusters } from '../../../domain/fleet/select-clusters.ts';
import { cluster } from './fleet-fixtures.ts';

describe('label selectors over Cluster labels', () => {
  const labels = { ring: 'prod', 'topology.kubernetes.io/region': 'eu-west-1' };
  it.each([
    [{}, true],
    [{ matchLabels: { ring: 'prod' } }, true],
    [{ matchLabels: { ring: 'canary' } }, false],
    [
      {
        matchExpressions: [
          {
            key: 'topology.kubernetes.io/region',
            operator: 'In' as const,
            values: ['eu-west-1', 'eu-central-1'],
          },
        ],
      },
      true,
    ],
    [{ matchExpressions: [{ key: 'ring', operator: 'NotIn' as const, values: ['prod'] }] }, false],
    [{ matchExpressions: [{ key: 'tier', operator: 'NotIn' as const, values: ['gold'] }] }, true],
    [{ matchExpressions: [{ key: 'ring', operator: 'Exists' as const }] }, true],
    [{ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' as const }] }, true],
    [
      { matchLabels: { ring: 'prod' }, matchExpressions: [{ key: 'tier', operator: 'Exists' as const }] },
      false,
    ],
  ])('%j → %s', (selector, expected) => {
    expect(matchesSelector(selector, labels)).toBe(expected);
  });

  it('names the field of an invalid selector', () => {
    expect(selectorProblem({ matchExpressions: [{ key: 'ring', operator: 'In' }] }, 's')).toBe(
      's.matchExpressions[0].values: operator In needs at least one value',
    );
    expect(
      selectorProblem({ matchExpressions: [{ key: 'ring', operator: 'Exists', values: ['x'] }] }, 's'),
    ).toBe('s.matchExpressions[0].values: operator Exists takes no values');
    expect(selectorProblem({ matchLabels: { ring: 'not a value!' } }, 's')).toMatch(
      /^s\.matchLabels\.ring: "not a value!" is not a label value/,
    );
    expect(selectorProblem({ matchLabels: { ring: 'prod' } }, 's')).toBeUndefined();
  });
});

describe('selectClusters', () => {
  const clusters = [
    cluster('c', { ring: 'prod' }),
    cluster('a', { ring: 'prod' }),
    cluster('b', { ring: 'canary' }),
    cluster('d'),
  ];
  it('selector plus names minus exclude, sorted by name; names not found are reported', () => {
    const s = selectClusters(
      {
        selector: { matchLabels: { ring: 'prod' } },
        names: ['d', 'ghost'],
        exclude: ['c'],
        onRemoval: 'Delete',
      },
      clusters,
    );
    expect(s.ok && s.clusters.map((c) => c.name)).toEqual(['a', 'd']);
    expect(s.ok && s.missingNames).toEqual(['ghost']);
  });
  it('names alone select only those', () => {
    const s = selectClusters({ names: ['b'], onRemoval: 'Delete' }, clusters);
    expect(s.ok && s.clusters.map((c) => c.name)).toEqual(['b']);
  });
});
