import { describe, expect, it } from 'vitest';
import { rolloutSpecSchema } from '../../../domain/api/release-set.ts';
import { planSteps, REMAINING_STEP, resolveCount } from '../../../domain/fleet/steps.ts';
import { cluster } from './fleet-fixtures.ts';

const clusters = [
  cluster('a', { ring: 'canary', region: 'eu' }),
  cluster('b', { region: 'eu' }),
  cluster('c', { region: 'us' }),
  cluster('d'),
];

describe('step membership', () => {
  it('a Cluster belongs to the first step that selects it; the rest form the implicit last step', () => {
    const plan = planSteps(
      rolloutSpecSchema.parse({
        maxConcurrent: 2,
        steps: [
          {
            name: 'canary',
            clusters: { matchLabels: { ring: 'canary' } },
            maxConcurrent: 1,
            approval: 'Required',
          },
          { name: 'eu', clusters: { matchLabels: { region: 'eu' } }, minHealthyTime: '10m' },
        ],
      }),
      clusters,
    );
    expect(plan.ok).toBe(true);
    if (!plan.ok) return;
    expect(
      plan.steps.map((s) => [s.name, s.clusters.map((c) => c.name), s.maxConcurrent, s.approvalRequired]),
    ).toEqual([
      ['canary', ['a'], 1, true],
      ['eu', ['b'], 2, false],
      [REMAINING_STEP, ['c', 'd'], 2, false],
    ]);
    expect(plan.steps[1]?.minHealthyMs).toBe(600_000);
    expect(plan.steps[2]?.timeoutMs).toBe(1_800_000);
  });

  it('without steps every Cluster is in one step', () => {
    const plan = planSteps(rolloutSpecSchema.parse({}), clusters);
    expect(
      plan.ok && plan.steps.map((s) => [s.name, s.clusters.length, s.maxConcurrent, s.maxFailures]),
    ).toEqual([[REMAINING_STEP, 4, 4, 0]]);
  });

  it('a step that selects no Cluster is refused, naming it', () => {
    const plan = planSteps(
      rolloutSpecSchema.parse({ steps: [{ name: 'asia', clusters: { matchLabels: { region: 'asia' } } }] }),
      clusters,
    );
    expect(plan).toMatchObject({ ok: false, field: 'spec.rollout.steps[0].clusters' });
  });

  it('a step whose Clusters an earlier step took all is refused the same way', () => {
    const plan = planSteps(
      rolloutSpecSchema.parse({
        steps: [
          { name: 'eu', clusters: { matchLabels: { region: 'eu' } } },
          { name: 'canary', clusters: { matchLabels: { ring: 'canary' } } },
        ],
      }),
      clusters,
    );
    expect(plan).toMatchObject({
      ok: false,
      field: 'spec.rollout.steps[1].clusters',
      message: expect.stringMatching(
        /^step canary selects no Cluster of the set \(a Cluster belongs to the first step that selects it\)/,
      ) as unknown,
    });
  });

  it("a step's invalid selector names its field once", () => {
    const plan = planSteps(
      rolloutSpecSchema.parse({ steps: [{ name: 'eu', clusters: { matchLabels: { 'bad key!': 'x' } } }] }),
      clusters,
    );
    expect(plan).toEqual({
      ok: false,
      field: 'spec.rollout.steps[0].clusters.matchLabels',
      message: '"bad key!" is not a label key ([prefix/]name, name at most 63 characters)',
    });
  });

  it('percentages: concurrency rounds up, the failure budget down', () => {
    expect(resolveCount('25%', 10, 'up')).toBe(3);
    expect(resolveCount('25%', 10, 'down')).toBe(2);
    expect(resolveCount('1%', 3, 'up')).toBe(1);
    expect(resolveCount(4, 10, 'up')).toBe(4);
  });

  it('the schema refuses maxConcurrent 0 and a percentage over 100', () => {
    expect(rolloutSpecSchema.safeParse({ maxConcurrent: 0 }).success).toBe(false);
    expect(rolloutSpecSchema.safeParse({ maxConcurrent: '0%' }).success).toBe(false);
    expect(rolloutSpecSchema.safeParse({ maxFailures: '101%' }).success).toBe(false);
    expect(rolloutSpecSchema.safeParse({ maxConcurrent: '100%', maxFailures: 0 }).success).toBe(true);
  });
});
