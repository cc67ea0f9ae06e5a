import { describe, expect, it } from 'vitest';
import { healthVerdict, type HealthObservation } from '../../../domain/observe/health-verdict.ts';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import { appliedStatus, NOW, release, RENDER_A } from '../observe/fixtures.ts';

/**
 * CEL's regex semantics and cost limits, end to end through the Healthy verdict the health loop
 * writes: the reported attack (`matches('^(a+)+$')` on a ConfigMap value of 32 'a' and '!', 117 s on b1e28ad) is now
 * a plain false, and an expression over its cost budget makes Healthy False / Degraded with a
 * message naming the check and the budget.
 */
const attack = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'team-a' },
  data: { value: `${'a'.repeat(32)}!` },
});

const assessed = (objects: KubeObject[]): HealthObservation => ({
  kind: 'assessed',
  renderRef: RENDER_A,
  objects: objects.map((object) => ({ object, live: object })),
});

/**
 * Over the cost budget at its first step, whatever the host's load: reading a value of 10^7
 * characters costs 10^6 + 1 units (1 per 10 characters produced, cel-meter.ts). A nested
 * comprehension also goes over budget, but it takes ~100 ms to get there, and on a loaded host
 * the 200 ms wall bound of healthVerdict's default runtime stopped it first (a flake in CI
 * under load); the bounds themselves are tested with an injected clock in cel-limits.test.ts.
 */
const OVER_BUDGET = 'object.data.value.size() > 0';
const huge = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'team-a' },
  data: { value: 'a'.repeat(10_000_000) },
});

describe('Healthy with hostile CEL checks', () => {
  it("the reported attack: matches('^(a+)+$') on 32 a and ! is false → Progressing, not a frozen loop", () => {
    const r = release(
      {
        healthAssessment: {
          progressDeadline: '48h',
          checks: [{ apiVersion: 'v1', kind: 'ConfigMap', healthy: "object.data.value.matches('^(a+)+$')" }],
        },
      },
      appliedStatus(),
    );
    const v = healthVerdict(r, assessed([attack('attack')]), NOW);
    expect(v.condition).toMatchObject({ type: 'Healthy', status: 'False', reason: 'Progressing' });
    expect(v.condition.message).toContain('checks[0] (v1 ConfigMap): the healthy expression is false');
  });

  it('an expression over its cost budget → False / Degraded naming checks[i] and the budget', () => {
    const r = release(
      {
        healthAssessment: {
          checks: [
            { apiVersion: 'apps/v1', kind: 'Deployment', healthy: 'true' },
            { apiVersion: 'v1', kind: 'ConfigMap', healthy: OVER_BUDGET },
          ],
        },
      },
      appliedStatus(),
    );
    const v = healthVerdict(r, assessed([huge('one'), huge('two')]), NOW);
    expect(v.condition).toMatchObject({ type: 'Healthy', status: 'False', reason: 'Degraded' });
    expect(v.condition.message).toContain(
      'checks[1] (v1 ConfigMap): healthy exceeded its cost budget of 1000000 units and was stopped',
    );
    expect(v.healthSummary).toMatchObject({ total: 2, degraded: 2 });
  });

  it('an invalid RE2 pattern literal is reported as a check error naming checks[i]; the kind keeps its built-in rule', () => {
    const r = release(
      {
        healthAssessment: {
          checks: [{ apiVersion: 'v1', kind: 'ConfigMap', healthy: "object.data.value.matches('(a)\\\\1')" }],
        },
      },
      appliedStatus(),
    );
    const v = healthVerdict(r, assessed([attack('attack')]), NOW);
    expect(v.condition).toMatchObject({ status: 'False', reason: 'Degraded' });
    expect(v.condition.message).toMatch(
      /^spec\.healthAssessment\.checks\[0\] \(v1 ConfigMap\): healthy: invalid regular expression '\(a\)\\1'/,
    );
  });
});
