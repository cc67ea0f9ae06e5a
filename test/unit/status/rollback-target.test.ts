import { describe, expect, it } from 'vitest';
import { rollbackTarget } from '../../../domain/status/rollback-target.ts';
import type { Release } from '../../../domain/api/objects.ts';

const ref = (digit: string) => `sha256:${digit.repeat(64)}`;
const attempt = (renderRef: string) => ({
  attemptedAt: '2026-12-01T10:00:00Z',
  phase: 'Succeeded' as const,
  renderRef,
});
const release = (status: Release['status']): Pick<Release, 'status'> => ({ status });

describe('rollbackTarget: the render a rollback pins (convoy rollback, POST …/rollback, the dashboard)', () => {
  const rolledOut = release({
    rollout: { renderRef: ref('2'), previousRenderRef: ref('1'), state: 'Succeeded' },
    lastHealthy: attempt(ref('2')),
  });

  it('by default the render applied before the current one, even when the current one is the last healthy', () => {
    expect(rollbackTarget(rolledOut, {}, 'ns/app')).toEqual({
      ok: true,
      ref: ref('1'),
      why: 'the render applied before 222222222222',
    });
  });

  it('lastHealthy: status.lastHealthy; to: the render named', () => {
    expect(rollbackTarget(rolledOut, { lastHealthy: true }, 'ns/app')).toEqual({
      ok: true,
      ref: ref('2'),
      why: 'the last healthy render',
    });
    expect(rollbackTarget(rolledOut, { to: ref('3') }, 'ns/app')).toEqual({
      ok: true,
      ref: ref('3'),
      why: 'the render named',
    });
  });

  it('refuses to with lastHealthy, and says what is missing: no rollout, no previous render, no healthy render', () => {
    expect(rollbackTarget(rolledOut, { to: ref('3'), lastHealthy: true }, 'ns/app')).toMatchObject({
      ok: false,
      reason: 'ConflictingOptions',
    });
    expect(rollbackTarget(release(undefined), {}, 'ns/app')).toEqual({
      ok: false,
      reason: 'NoRender',
      message: 'Release ns/app has applied no render yet: there is nothing to roll back to',
    });
    expect(
      rollbackTarget(release({ rollout: { renderRef: ref('1'), state: 'Succeeded' } }), {}, 'ns/app'),
    ).toEqual({
      ok: false,
      reason: 'NoPreviousRender',
      message: 'Release ns/app has no previous render: 111111111111 is the first it applied',
    });
    expect(
      rollbackTarget(
        release({ rollout: { renderRef: ref('1'), state: 'Succeeded' } }),
        { lastHealthy: true },
        'ns/app',
      ),
    ).toMatchObject({
      ok: false,
      reason: 'NoHealthyRender',
    });
  });
});
