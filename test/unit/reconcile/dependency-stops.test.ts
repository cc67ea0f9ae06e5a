// The rows "Dependencies: …" of the stop table: the step awaitDependencies reaches each, and
// conclude turns it into Applied, phase, failure, lastSuccessful and the Outcome.
import { describe, expect, it } from 'vitest';
import { awaitDependencies } from '../../../domain/reconcile/await-dependencies.ts';
import { conclude } from '../../../domain/reconcile/conclude.ts';
import type { Halt } from '../../../domain/reconcile/halt.ts';
import type { ReconcilePorts } from '../../../domain/reconcile/ports.ts';
import type { SyncRun } from '../../../domain/reconcile/run.ts';
import { DEPENDENCY_RECHECK_MS } from '../../../domain/reconcile/stops.ts';
import type { Release } from '../../../domain/api/objects.ts';
import type { DependencyReads } from '../../../domain/dependencies/reads.ts';
import { readsOf, rel, R1, R2 } from '../dependencies/fixtures.ts';

const NOW = new Date('2026-12-07T10:30:00Z');

function run(release: Release, reads: DependencyReads | undefined, renderRef = R2): SyncRun {
  return {
    release,
    ports: { dependencies: reads } as unknown as ReconcilePorts,
    now: NOW,
    forced: false,
    target: {} as SyncRun['target'],
    objects: [],
    renderRef,
    inFlight: false,
    tracker: undefined,
  };
}

function concluded(release: Release, halt: Halt) {
  return conclude({
    release,
    now: NOW,
    resolved: { renderRef: R2 },
    retention: { maxRenders: 10, maxAge: '720h' },
    halt,
  });
}

const applied = (d: ReturnType<typeof concluded>) => d.slice.conditions?.find((c) => c.type === 'Applied');

describe('Dependencies rows of the stop table', () => {
  it('Dependencies: wait → Applied False/DependencyNotReady, phase empty, lastSuccessful kept, a 5-min safety recheck only', async () => {
    const c = rel('c', 'ready', [{ name: 'b' }]);
    const halt = (await awaitDependencies(run(c, readsOf([rel('b', 'new'), c]))))!;
    const decision = concluded(c, halt);
    expect(applied(decision)).toMatchObject({
      status: 'False',
      reason: 'DependencyNotReady',
      message: 'waits for Release team-a/b (Ready): not ready yet',
    });
    expect(decision.slice.lastAttempted?.phase).toBe('');
    expect(decision.slice.lastAttempted?.failure).toBeUndefined();
    expect(decision.slice.lastSuccessful?.renderRef).toBe(R1);
    expect(decision.outcome).toEqual({
      kind: 'requeueAfter',
      delayMs: DEPENDENCY_RECHECK_MS,
      reason: 'DependencyNotReady',
    });
  });

  it('Dependencies: not found → Syncing / DependencyNotFound, retried with backoff', async () => {
    const c = rel('c', 'ready', [{ name: 'gone' }]);
    const decision = concluded(c, (await awaitDependencies(run(c, readsOf([c]))))!);
    expect(decision.slice.lastAttempted).toMatchObject({
      phase: 'Failed',
      failure: { stage: 'Syncing', reason: 'DependencyNotFound' },
    });
    expect(decision.outcome.kind).toBe('retry');
  });

  it('Dependencies: cycle → Syncing / DependencyCycle, not retried (a member changing its spec wakes it), also for a render already applied', async () => {
    const a = rel('a', 'ready', [{ name: 'b' }]);
    const b = rel('b', 'ready', [{ name: 'a' }]);
    const decision = concluded(a, (await awaitDependencies(run(a, readsOf([a, b]), R1)))!);
    expect(applied(decision)).toMatchObject({ reason: 'DependencyCycle' });
    expect(decision.slice.lastAttempted?.failure?.stage).toBe('Syncing');
    expect(decision.outcome.kind).toBe('stop');
  });

  it('Dependencies: timeout → Syncing / DependencyTimeout, retried with backoff', async () => {
    const waiting = {
      type: 'Applied',
      status: 'False' as const,
      reason: 'DependencyNotReady',
      message: 'waits for Release team-a/b (Ready): not ready yet',
      lastTransitionTime: '2026-12-07T10:00:00Z',
      observedGeneration: 3,
    };
    const c = rel('c', 'ready', [{ name: 'b' }], { policy: { timeout: '10m' }, applied: waiting });
    const decision = concluded(c, (await awaitDependencies(run(c, readsOf([rel('b', 'new'), c]))))!);
    expect(applied(decision)).toMatchObject({ reason: 'DependencyTimeout' });
    expect(decision.outcome.kind).toBe('retry');
  });

  it('Dependencies: another namespace that does not allow it → Syncing / DependencyNotAllowed naming the rule, retried', async () => {
    const c = rel('c', 'ready', [{ name: 'b', namespace: 'platform' }]);
    const decision = concluded(c, (await awaitDependencies(run(c, readsOf([c]))))!);
    expect(applied(decision)?.message).toContain('convoy.dev/dependable-from');
    expect(decision.slice.lastAttempted?.failure?.reason).toBe('DependencyNotAllowed');
    expect(decision.outcome.kind).toBe('retry');
  });

  it('no dependsOn: the step reads nothing and does not stop', async () => {
    expect(await awaitDependencies(run(rel('c', 'ready'), undefined))).toBeUndefined();
  });
});
