import { describe, expect, it } from 'vitest';
import { compileChecks, type HealthCheck } from '../../../domain/health/index.ts';
import { assess, deployment, DEPLOYMENT_DONE, NOW, object } from './fixtures.ts';

const database = (phase: string | undefined, extra: Record<string, unknown> = {}) =>
  object('example.com/v1', 'Database', {
    spec: {},
    status: phase === undefined ? { ...extra } : { phase, ...extra },
  });

const DATABASE_CHECK: HealthCheck = {
  apiVersion: 'example.com/v1',
  kind: 'Database',
  healthy: "object.status.phase == 'Ready'",
};

function compiled(...checks: HealthCheck[]) {
  const result = compileChecks(checks);
  expect(result.errors).toEqual([]);
  return result.compiled;
}

describe('CEL checks', () => {
  it('CEL check whose healthy expression is true is Healthy', () => {
    expect(assess(database('Ready'), { checks: compiled(DATABASE_CHECK) })).toEqual({
      state: 'Healthy',
      message: 'checks[0] (example.com/v1 Database): the healthy expression is true',
    });
  });

  it('CEL check whose healthy expression is false is Progressing', () => {
    expect(assess(database('Provisioning'), { checks: compiled(DATABASE_CHECK) })).toEqual({
      state: 'Progressing',
      message: 'checks[0] (example.com/v1 Database): the healthy expression is false',
    });
  });

  it('CEL check whose healthy expression stays false past the deadline is Degraded', () => {
    const health = assess(database('Provisioning'), {
      checks: compiled(DATABASE_CHECK),
      progressingSince: new Date(NOW.getTime() - 3_600_000),
      progressDeadlineMs: 600_000,
    });
    expect(health.state).toBe('Degraded');
    expect(health.message).toContain('exceeded the progress deadline');
  });

  it('CEL check whose degraded expression is true is Degraded', () => {
    const check = { ...DATABASE_CHECK, degraded: "object.status.phase == 'Failed'" };
    expect(assess(database('Failed'), { checks: compiled(check) })).toEqual({
      state: 'Degraded',
      message: 'checks[0] (example.com/v1 Database): the degraded expression is true',
    });
  });

  it('CEL check whose degraded expression is false falls through to healthy', () => {
    const check = { ...DATABASE_CHECK, degraded: "object.status.phase == 'Failed'" };
    expect(assess(database('Ready'), { checks: compiled(check) }).state).toBe('Healthy');
  });

  it('CEL check that does not compile is reported with its index, not thrown', () => {
    const result = compileChecks([
      DATABASE_CHECK,
      { apiVersion: 'example.com/v1', kind: 'Cache', healthy: 'object.status.phase ==' },
      { apiVersion: 'example.com/v1', kind: 'Queue', healthy: 'true', degraded: 'nosuchvar == 1' },
    ]);
    expect(result.compiled.map((c) => c.index)).toEqual([0]);
    expect(result.errors).toHaveLength(2);
    expect(result.errors[0]).toMatchObject({ index: 1, apiVersion: 'example.com/v1', kind: 'Cache' });
    expect(result.errors[0]?.message).toMatch(/^checks\[1\] \(example\.com\/v1 Cache\): healthy: /);
    expect(result.errors[1]).toMatchObject({ index: 2, kind: 'Queue' });
    expect(result.errors[1]?.message).toContain('degraded: Unknown variable: nosuchvar');
  });

  it('CEL check whose expression can never be a boolean is reported at compile time', () => {
    const result = compileChecks([{ apiVersion: 'example.com/v1', kind: 'Database', healthy: "'Ready'" }]);
    expect(result.compiled).toEqual([]);
    expect(result.errors[0]?.message).toContain('returns string; it must return bool');
  });

  it('CEL check on a Secret is reported at compile time and never evaluated', () => {
    const result = compileChecks([
      { apiVersion: 'v1', kind: 'Secret', healthy: "object.data.password == 'x'" },
    ]);
    expect(result.compiled).toEqual([]);
    expect(result.errors[0]?.message).toContain('checks on Secrets are not allowed');
  });

  it('CEL check with a runtime evaluation error is Degraded naming the check', () => {
    const health = assess(database(undefined), { checks: compiled(DATABASE_CHECK) });
    expect(health).toEqual({
      state: 'Degraded',
      message: 'checks[0] (example.com/v1 Database): healthy evaluation failed: No such key: phase',
    });
  });

  it('CEL check with a non-boolean result is Degraded with a message', () => {
    const check = { apiVersion: 'example.com/v1', kind: 'Database', healthy: 'object.status.phase' };
    expect(assess(database('Ready'), { checks: compiled(check) })).toEqual({
      state: 'Degraded',
      message: 'checks[0] (example.com/v1 Database): healthy returned string, not a boolean',
    });
  });

  it('CEL check overrides the built-in rule for its apiVersion and kind', () => {
    const rollingOut = deployment({}, { ...DEPLOYMENT_DONE, updatedReplicas: 1 });
    expect(assess(rollingOut).state).toBe('Progressing');
    const checks = compiled({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      healthy: 'object.status.availableReplicas >= 2',
    });
    expect(assess(rollingOut, { checks }).state).toBe('Healthy');
  });

  it('CEL check does not apply to another apiVersion or kind', () => {
    const checks = compiled(DATABASE_CHECK);
    const otherVersion = object('example.com/v2', 'Database', { status: { phase: 'Nope' } });
    expect(assess(otherVersion, { checks }).state).toBe('Healthy');
    const rollingOut = deployment({}, { ...DEPLOYMENT_DONE, updatedReplicas: 1 });
    expect(assess(rollingOut, { checks }).state).toBe('Progressing');
  });

  it('CEL checks see JSON integers as int', () => {
    const check = {
      apiVersion: 'example.com/v1',
      kind: 'Database',
      healthy: 'object.status.replicas + 1 == 3 && object.status.ratio > 0.4',
    };
    expect(assess(database('Ready', { replicas: 2, ratio: 0.5 }), { checks: compiled(check) }).state).toBe(
      'Healthy',
    );
  });

  it('CEL checks can test optional fields with has()', () => {
    const check = {
      apiVersion: 'example.com/v1',
      kind: 'Database',
      healthy: "has(object.status.phase) && object.status.phase == 'Ready'",
    };
    expect(assess(database(undefined), { checks: compiled(check) }).state).toBe('Progressing');
  });

  it('Several CEL checks for one kind: the worst verdict wins', () => {
    const checks = compiled(DATABASE_CHECK, {
      apiVersion: 'example.com/v1',
      kind: 'Database',
      healthy: 'false',
    });
    expect(assess(database('Ready'), { checks })).toEqual({
      state: 'Progressing',
      message: 'checks[1] (example.com/v1 Database): the healthy expression is false',
    });
  });

  it('CEL evaluation does not modify the live object', () => {
    const live = database('Ready', { replicas: 2 });
    const before = structuredClone(live);
    assess(live, { checks: compiled(DATABASE_CHECK) });
    expect(live).toEqual(before);
  });
});
