import { describe, expect, it } from 'vitest';
import { releaseChangeCause, releaseChangeCounts } from '../../../domain/relay/release-events.ts';
import { release } from './fixtures.ts';

const base = release();

describe('a Release event counts (asks for a reconcile) when', () => {
  it('the Release is added', () => {
    expect(releaseChangeCounts(undefined, base)).toBe(true);
    expect(releaseChangeCause(undefined, base)).toBe('Release added');
  });

  it('the Release is deleted', () => {
    expect(releaseChangeCounts(base, undefined)).toBe(true);
  });

  it('metadata.generation changed (a spec change)', () => {
    const next = release({ generation: 2, resourceVersion: '101', spec: { clusterWave: 3 } });
    expect(releaseChangeCause(base, next)).toBe('spec changed (generation 1 → 2)');
  });

  it.each(['convoy.dev/pin', 'convoy.dev/sync-requested-at', 'convoy.dev/force-sync-requested-at'])(
    'the annotation %s is set, changed or removed',
    (key) => {
      const set = release({ resourceVersion: '101', annotations: { [key]: '2026-11-29T10:00:00Z' } });
      const changed = release({ resourceVersion: '102', annotations: { [key]: '2026-11-29T10:05:00Z' } });
      expect(releaseChangeCounts(base, set)).toBe(true);
      expect(releaseChangeCounts(set, changed)).toBe(true);
      expect(releaseChangeCounts(changed, base)).toBe(true);
    },
  );

  it('labels changed (they decide which Mutations select the Release)', () => {
    const labelled = release({ resourceVersion: '101', labels: { tier: 'prod' } });
    expect(releaseChangeCause(base, labelled)).toBe('labels changed');
    expect(releaseChangeCounts(labelled, release({ resourceVersion: '102', labels: { tier: 'dev' } }))).toBe(
      true,
    );
  });

  it('deletion was requested (deletionTimestamp set)', () => {
    expect(
      releaseChangeCounts(
        base,
        release({ resourceVersion: '101', deletionTimestamp: '2026-02-01T00:00:00Z' }),
      ),
    ).toBe(true);
  });

  it('the Release was deleted and created again under the same name (new uid)', () => {
    expect(releaseChangeCounts(base, release({ uid: 'uid-2', resourceVersion: '200' }))).toBe(true);
  });
});

describe('a Release event does not count when', () => {
  it("only the status changed (the functions' own writes)", () => {
    const next = release({
      resourceVersion: '101',
      status: {
        observedGeneration: 1,
        lastAttempted: { attemptedAt: '2026-01-01T00:05:00Z', phase: 'Succeeded' },
      },
    });
    expect(releaseChangeCounts(base, next)).toBe(false);
  });

  it('another annotation changed', () => {
    expect(
      releaseChangeCounts(
        base,
        release({ resourceVersion: '101', annotations: { 'example.com/note': 'x' } }),
      ),
    ).toBe(false);
  });

  it('a request annotation went from empty to absent', () => {
    const empty = release({ annotations: { 'convoy.dev/pin': '' } });
    expect(releaseChangeCounts(empty, release({ resourceVersion: '101' }))).toBe(false);
  });

  it('labels were rewritten in another order', () => {
    const a = release({ labels: { a: '1', b: '2' } });
    const b = release({ resourceVersion: '101', labels: { b: '2', a: '1' } });
    expect(releaseChangeCounts(a, b)).toBe(false);
  });
});
