// Large renders: the object limit checked right after render, the throttled
// progress writes of a long run, the status slice a progress write applies, and the bounded
// concurrency of the apply. Pure: no server.
import { describe, expect, it } from 'vitest';
import { parseRelease, type Release } from '../../../domain/api/objects.ts';
import { releaseStatusSchema } from '../../../domain/api/release-status.ts';
import { eachBounded } from '../../../domain/reconcile/bounded.ts';
import { concludeProgress } from '../../../domain/reconcile/conclude.ts';
import { halt } from '../../../domain/reconcile/halt.ts';
import { createProgressTracker, progressDue, type ApplyCounts } from '../../../domain/reconcile/progress.ts';
import {
  DEFAULT_MAX_RENDER_OBJECTS,
  describeBytes,
  renderOverLimit,
  validMaxObjects,
} from '../../../domain/reconcile/render-limits.ts';
import { Stops } from '../../../domain/reconcile/stops.ts';
import { statusPatchBody } from '../../../domain/status/slices.ts';

const T = '2026-11-29T10:00:00Z';
const REF = `sha256:${'a'.repeat(64)}`;
const NEW = `sha256:${'b'.repeat(64)}`;

describe('the object limit (domain/reconcile/render-limits.ts)', () => {
  it('a render at the limit passes; one object more stops at Rendering / DeployFailed naming the count and the limit', () => {
    expect(renderOverLimit(10_000, { maxObjects: 10_000 })).toBeUndefined();
    const over = renderOverLimit(10_001, { maxObjects: 10_000 });
    expect(over?.halt).toBe('renderFailed');
    expect(Stops.renderFailed).toMatchObject({ stage: 'Rendering', reason: 'DeployFailed' });
    expect(over?.message).toContain('10001 objects');
    expect(over?.message).toContain('limit of 10000 objects per render');
    expect(over?.message).toContain('CONVOY_MAX_RENDER_OBJECTS');
    expect(over?.message).toContain('nothing was stored or applied');
  });

  it('names what was over the limit (a pinned render)', () => {
    expect(renderOverLimit(3, { maxObjects: 2 }, `the pinned render ${REF}`)?.message).toMatch(
      new RegExp(`^the pinned render ${REF} has 3 objects`),
    );
  });

  it('byte limits read as bytes below 1 MiB, MiB above', () => {
    expect(describeBytes(1_000)).toBe('1000 bytes');
    expect(describeBytes(32 * 1024 * 1024)).toBe('32 MiB');
    expect(describeBytes(1.5 * 1024 * 1024)).toBe('1.5 MiB');
  });

  it('the default is 10,000; a setting must be a whole number of at least 1', () => {
    expect(DEFAULT_MAX_RENDER_OBJECTS).toBe(10_000);
    expect(validMaxObjects(1)).toBe(true);
    for (const bad of [0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY])
      expect(validMaxObjects(bad)).toBe(false);
  });
});

describe('progress throttling (domain/reconcile/progress.ts)', () => {
  it('is due once a whole interval has passed since the last write (or the run start)', () => {
    expect(progressDue(0, 9_999, { intervalMs: 10_000 })).toBe(false);
    expect(progressDue(0, 10_000, { intervalMs: 10_000 })).toBe(true);
  });

  it('writes at most once per interval, never per object, and nothing in a run shorter than one interval', async () => {
    let now = 1_000;
    const written: ApplyCounts[] = [];
    const tracker = createProgressTracker({
      policy: { intervalMs: 10_000 },
      clock: () => now,
      startedAtMs: 1_000,
      total: 10_000,
      write: (counts) => {
        written.push(counts);
        return Promise.resolve();
      },
    });
    // 10,000 objects, one every 2 ms: 20 s of applying.
    for (let i = 1; i <= 10_000; i++) {
      now += 2;
      await tracker.update({ checked: 10_000, applied: i });
    }
    expect(written).toEqual([
      { total: 10_000, checked: 10_000, applied: 5_000 },
      { total: 10_000, checked: 10_000, applied: 10_000 },
    ]);

    const short: ApplyCounts[] = [];
    let t = 0;
    const quick = createProgressTracker({
      policy: { intervalMs: 10_000 },
      clock: () => t,
      startedAtMs: 0,
      total: 200,
      write: (c) => (short.push(c), Promise.resolve()),
    });
    for (let i = 1; i <= 200; i++) {
      t += 10;
      await quick.update({ applied: i });
    }
    expect(short).toEqual([]);
  });

  it('does not start a second write while one is under way; a later due update writes the newer counts', async () => {
    let now = 0;
    const written: number[] = [];
    let release: () => void = () => undefined;
    const tracker = createProgressTracker({
      policy: { intervalMs: 10 },
      clock: () => now,
      startedAtMs: 0,
      total: 5,
      write: (c) => {
        written.push(c.applied);
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
    });
    now = 10;
    const first = tracker.update({ applied: 1 });
    now = 30;
    await tracker.update({ applied: 2 });
    expect(written).toEqual([1]);
    release();
    await first;
    now = 40;
    const third = tracker.update({ applied: 3 });
    release();
    await third;
    expect(written).toEqual([1, 3]);
  });
});

function releaseWithStatus(): Release {
  const parsed = parseRelease({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: { name: 'big', namespace: 'team-a', generation: 3 },
    spec: {
      cluster: { name: 'prod' },
      source: { git: { url: 'https://git.example.com/apps.git', ref: { branch: 'main' } } },
    },
    status: {
      observedGeneration: 2,
      reconciledAt: T,
      lastAttempted: { attemptedAt: T, phase: 'Succeeded', renderRef: REF },
      lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef: REF },
      rollout: { renderRef: REF, state: 'Succeeded' },
      waves: [{ wave: 0, objects: 3, state: 'Healthy' }],
      resolvedRetentionPolicy: { maxRenders: 10, maxAge: '720h' },
      healthSummary: {
        renderRef: REF,
        checkedAt: T,
        total: 0,
        healthy: 0,
        progressing: 0,
        degraded: 0,
        missing: 0,
        unknown: 0,
        objects: [],
      },
      conditions: [
        {
          type: 'Applied',
          status: 'True',
          reason: 'Applied',
          message: 'applied',
          lastTransitionTime: T,
          observedGeneration: 2,
        },
        {
          type: 'Healthy',
          status: 'True',
          reason: 'Healthy',
          message: '',
          lastTransitionTime: T,
          observedGeneration: 2,
        },
      ],
    },
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

describe('the progress slice (conclude.ts concludeProgress)', () => {
  it('lastAttempted is Syncing with the counts; every other convoy-release field stays as found, reconciledAt (the Lease mark) included', () => {
    const release = releaseWithStatus();
    const slice = concludeProgress(
      { release, now: new Date('2026-11-29T10:05:00Z'), resolved: { renderRef: NEW } },
      { total: 10_000, checked: 10_000, applied: 2_500 },
      new Date('2026-11-29T10:05:12.700Z'),
    );
    expect(slice.lastAttempted).toEqual({
      attemptedAt: '2026-11-29T10:05:00Z',
      phase: 'Syncing',
      renderRef: NEW,
      progress: { total: 10_000, checked: 10_000, applied: 2_500, updatedAt: '2026-11-29T10:05:12Z' },
    });
    const s = release.status;
    expect(slice).toMatchObject({
      reconciledAt: T,
      observedGeneration: 2,
      lastSuccessful: s?.lastSuccessful,
      rollout: s?.rollout,
      waves: s?.waves,
      resolvedRetentionPolicy: s?.resolvedRetentionPolicy,
    });
    // Only its own conditions: Healthy belongs to convoy-health.
    expect(slice.conditions.map((c) => c.type)).toEqual(['Applied']);
    const body = statusPatchBody('convoy-release', slice);
    expect(releaseStatusSchema.safeParse(body).success).toBe(true);
  });
});

describe('bounded apply (domain/reconcile/bounded.ts)', () => {
  it('keeps at most `limit` in flight and does every item', async () => {
    let inFlight = 0;
    let most = 0;
    const done: number[] = [];
    const result = await eachBounded([...Array(50).keys()], 8, async (i) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, i % 3));
      inFlight--;
      done.push(i);
      return undefined;
    });
    expect(result).toBeUndefined();
    expect(most).toBe(8);
    expect(done.sort((a, b) => a - b)).toEqual([...Array(50).keys()]);
  });

  it('after a stop starts nothing more and returns the stop of the earliest item', async () => {
    const started: number[] = [];
    const result = await eachBounded([...Array(40).keys()], 4, async (i) => {
      started.push(i);
      await new Promise((r) => setTimeout(r, i === 6 ? 5 : 1));
      return i === 5 || i === 6 ? halt('applyFailed', `object ${i}`) : undefined;
    });
    expect(result?.message).toBe('object 5');
    expect(Math.max(...started)).toBeLessThan(12);
  });
});
