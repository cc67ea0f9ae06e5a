import { describe, expect, it } from 'vitest';
import type { StoredRenderMeta } from '../../../domain/store/render-store.ts';
import {
  DEFAULT_RETENTION_POLICY,
  InvalidRetentionPolicyError,
  protectedRenderRefs,
  resolveRetentionPolicy,
  selectExpired,
} from '../../../domain/store/retention.ts';

const NOW = new Date('2026-11-29T12:00:00Z');
const HOUR = 3_600_000;

function ref(n: number): string {
  return `sha256:${n.toString(16).padStart(64, '0')}`;
}

/** Render n, created `hoursAgo` before NOW. */
function render(n: number, hoursAgo: number): StoredRenderMeta {
  return {
    renderRef: ref(n),
    namespace: 'team-a',
    release: 'podinfo',
    createdAt: new Date(NOW.getTime() - hoursAgo * HOUR).toISOString(),
    objectCount: 1,
  };
}

const NONE = new Set<string>();

describe('resolveRetentionPolicy: spec.retentionPolicy merged over the installation default', () => {
  it('no spec.retentionPolicy → the installation default (20 renders, 720h when none is configured)', () => {
    expect(resolveRetentionPolicy(undefined)).toEqual({ maxRenders: 20, maxAge: '720h' });
    expect(resolveRetentionPolicy(undefined, DEFAULT_RETENTION_POLICY)).toEqual(DEFAULT_RETENTION_POLICY);
    expect(resolveRetentionPolicy({}, { maxRenders: 5, maxAge: '48h' })).toEqual({
      maxRenders: 5,
      maxAge: '48h',
    });
  });

  it('only maxRenders set → maxAge comes from the default', () => {
    expect(resolveRetentionPolicy({ maxRenders: 3 }, { maxRenders: 20, maxAge: '720h' })).toEqual({
      maxRenders: 3,
      maxAge: '720h',
    });
  });

  it('only maxAge set → maxRenders comes from the default', () => {
    expect(resolveRetentionPolicy({ maxAge: '1h30m' }, { maxRenders: 20, maxAge: '720h' })).toEqual({
      maxRenders: 20,
      maxAge: '1h30m',
    });
  });

  it('both set → the Release wins on both', () => {
    expect(
      resolveRetentionPolicy({ maxRenders: 2, maxAge: '30m' }, { maxRenders: 20, maxAge: '720h' }),
    ).toEqual({
      maxRenders: 2,
      maxAge: '30m',
    });
  });

  it('an invalid field names the field it came from', () => {
    expect(() => resolveRetentionPolicy({ maxAge: '7d' })).toThrow(InvalidRetentionPolicyError);
    expect(() => resolveRetentionPolicy({ maxAge: '7d' })).toThrow(/spec\.retentionPolicy\.maxAge/);
    expect(() => resolveRetentionPolicy({ maxRenders: 0 })).toThrow(/spec\.retentionPolicy\.maxRenders/);
    expect(() => resolveRetentionPolicy(undefined, { maxRenders: 20, maxAge: 'forever' })).toThrow(
      /installation default retentionPolicy\.maxAge/,
    );
  });
});

describe('selectExpired', () => {
  const policy = { maxRenders: 3, maxAge: '720h' };

  it('keeps at most maxRenders, newest first, whatever the input order', () => {
    const renders = [render(3, 3), render(1, 1), render(5, 5), render(2, 2), render(4, 4)];
    expect(selectExpired(renders, policy, NONE, NOW)).toEqual([ref(5), ref(4)]);
  });

  it('keeps nothing older than maxAge', () => {
    const renders = [render(1, 1), render(2, 10), render(3, 100)];
    expect(selectExpired(renders, { maxRenders: 20, maxAge: '24h' }, NONE, NOW)).toEqual([ref(3)]);
  });

  it('a render exactly maxAge old is kept; one millisecond older goes', () => {
    const exact = render(1, 24);
    const older = { ...render(2, 24), createdAt: new Date(NOW.getTime() - 24 * HOUR - 1).toISOString() };
    expect(selectExpired([exact, older], { maxRenders: 20, maxAge: '24h' }, NONE, NOW)).toEqual([ref(2)]);
  });

  it('understands compound durations such as 1h30m', () => {
    const renders = [render(1, 1), render(2, 1.5), { ...render(3, 1.5), createdAt: '2026-11-29T10:29:59Z' }];
    expect(selectExpired(renders, { maxRenders: 20, maxAge: '1h30m' }, NONE, NOW)).toEqual([ref(3)]);
  });

  it('never deletes a protected render, however old or far outside the window', () => {
    const renders = [render(1, 1), render(2, 2), render(3, 3), render(4, 2000), render(5, 3000)];
    const protectedRefs = new Set([ref(4), ref(5)]);
    expect(selectExpired(renders, { maxRenders: 1, maxAge: '720h' }, protectedRefs, NOW)).toEqual([
      ref(3),
      ref(2),
    ]);
  });

  it('a protected render inside the window takes one of the maxRenders slots', () => {
    // Newest two are 1 and 2; 2 is protected and counts, so 3 is outside the window.
    const renders = [render(1, 1), render(2, 2), render(3, 3)];
    expect(selectExpired(renders, { maxRenders: 2, maxAge: '720h' }, new Set([ref(2)]), NOW)).toEqual([
      ref(3),
    ]);
  });

  it('a protected render outside the window is kept in addition and does not push out a newer one', () => {
    const renders = [render(1, 1), render(2, 2), render(3, 3), render(4, 4)];
    expect(selectExpired(renders, { maxRenders: 2, maxAge: '720h' }, new Set([ref(4)]), NOW)).toEqual([
      ref(3),
    ]);
  });

  it('every status anchor protects its render: lastSuccessful, lastHealthy, rollout, rollout.previous, pin', () => {
    const renders = [1, 2, 3, 4, 5, 6, 7].map((n) => render(n, 1000 + n));
    const protectedRefs = protectedRenderRefs(
      {
        lastSuccessful: { renderRef: ref(1) },
        lastHealthy: { renderRef: ref(2) },
        rollout: { renderRef: ref(3), previousRenderRef: ref(4) },
        pin: { renderRef: ref(5) },
      },
      ref(6),
    );
    expect(selectExpired(renders, { maxRenders: 1, maxAge: '1h' }, protectedRefs, NOW)).toEqual([ref(7)]);
  });

  it('returns each renderRef once, oldest first, and nothing for an empty store', () => {
    const renders = [render(1, 1), render(2, 2), render(2, 2), render(3, 3)];
    expect(selectExpired(renders, { maxRenders: 1, maxAge: '720h' }, NONE, NOW)).toEqual([ref(3), ref(2)]);
    expect(selectExpired([], policy, NONE, NOW)).toEqual([]);
  });

  it('a render whose createdAt does not parse is not aged out but sorts oldest for the window', () => {
    const unknownAge = { ...render(9, 0), createdAt: 'not a time' };
    expect(selectExpired([render(1, 1), unknownAge], { maxRenders: 5, maxAge: '1m' }, NONE, NOW)).toEqual([
      ref(1),
    ]);
    expect(selectExpired([render(1, 1), unknownAge], { maxRenders: 1, maxAge: '720h' }, NONE, NOW)).toEqual([
      ref(9),
    ]);
  });

  it('an invalid policy is refused rather than guessed', () => {
    expect(() => selectExpired([], { maxRenders: 1.5, maxAge: '1h' }, NONE, NOW)).toThrow(
      InvalidRetentionPolicyError,
    );
    expect(() => selectExpired([], { maxRenders: 1, maxAge: '' }, NONE, NOW)).toThrow(
      InvalidRetentionPolicyError,
    );
  });
});

describe('protectedRenderRefs', () => {
  it('collects the five anchors and skips absent or empty ones', () => {
    expect(protectedRenderRefs(undefined)).toEqual(new Set());
    expect(protectedRenderRefs({ rollout: { renderRef: ref(1) }, pin: { renderRef: '' } }, '')).toEqual(
      new Set([ref(1)]),
    );
    expect(
      protectedRenderRefs(
        { lastSuccessful: { renderRef: ref(1) }, lastHealthy: { renderRef: ref(1) } },
        ref(2),
      ),
    ).toEqual(new Set([ref(1), ref(2)]));
  });
});
