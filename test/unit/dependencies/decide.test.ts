// The dependency gate's rows, decided from objects alone (domain/dependencies/decide.ts).
import { describe, expect, it } from 'vitest';
import {
  decideDependencies,
  type DependencyDecision,
  type DependencyGate,
} from '../../../domain/dependencies/decide.ts';
import type { DependencyReads } from '../../../domain/dependencies/reads.ts';
import type { Release } from '../../../domain/api/objects.ts';
import { MAX_DEPTH } from '../../../domain/dependencies/graph.ts';
import { combinedVerdict } from '../../../domain/status/verdict.ts';
import { readsOf, rel, set, T } from './fixtures.ts';

const NOW = new Date('2026-12-07T10:30:00Z');
const gate = (release: Release, reads: DependencyReads, extra: Partial<DependencyGate> = {}) =>
  decideDependencies({
    release,
    reads,
    now: NOW,
    newRender: true,
    applied: undefined,
    timeoutMs: undefined,
    ...extra,
  });

function expectStop(decision: DependencyDecision, stop: string, words: string) {
  expect(decision.kind === 'stop' && decision.stop).toBe(stop);
  expect(decision.kind === 'stop' ? decision.message : '').toContain(words);
}

describe('dependsOn: the decision before apply', () => {
  it('no dependencies: met without a read', async () => {
    const reads = readsOf([]);
    expect(await gate(rel('app', 'new'), reads)).toEqual({ kind: 'met' });
    expect(reads.count).toBe(0);
  });

  it('DependencyNotReady names the first unmet dependency and its verdict class', async () => {
    const c = rel('c', 'new', [{ name: 'a' }, { name: 'b' }]);
    const reads = readsOf([rel('a', 'ready'), rel('b', 'new', [{ name: 'a' }]), c]);
    expect(await gate(c, reads)).toEqual({
      kind: 'stop',
      stop: 'dependencyNotReady',
      message: 'waits for Release team-a/b (Ready): not ready yet',
    });
  });

  it('met once every dependency is Ready at its current render', async () => {
    const c = rel('c', 'new', [{ name: 'a' }, { name: 'b' }]);
    expect(await gate(c, readsOf([rel('a', 'ready'), rel('b', 'ready'), c]))).toEqual({ kind: 'met' });
  });

  it('a failed dependency is named as failed', async () => {
    const c = rel('c', 'new', [{ name: 'a' }]);
    const decided = await gate(c, readsOf([rel('a', 'failed'), c]));
    expect(decided).toMatchObject({
      stop: 'dependencyNotReady',
      message: 'waits for Release team-a/a (Ready): failed',
    });
  });

  it('a render already applied does not wait (no thrash when a dependency flaps)', async () => {
    const c = rel('c', 'ready', [{ name: 'a' }]);
    expect(await gate(c, readsOf([rel('a', 'failed'), c]), { newRender: false })).toEqual({ kind: 'met' });
  });

  it('DependencyNotFound names the entry; retried by its stop row', async () => {
    const c = rel('c', 'new', [{ name: 'ghost' }]);
    expect(await gate(c, readsOf([c]))).toEqual({
      kind: 'stop',
      stop: 'dependencyNotFound',
      message: 'spec.dependsOn[0] names Release team-a/ghost, which does not exist',
    });
  });

  it('DependencyCycle: A → B → A, reported for both, whatever their render', async () => {
    const a = rel('a', 'ready', [{ name: 'b' }]);
    const b = rel('b', 'ready', [{ name: 'a' }]);
    const reads = readsOf([a, b]);
    expectStop(
      await gate(a, reads, { newRender: false }),
      'dependencyCycle',
      'team-a/a → team-a/b → team-a/a',
    );
    expect(await gate(b, reads)).toMatchObject({ stop: 'dependencyCycle' });
  });

  it('a self-reference that spells its own namespace is a cycle of one', async () => {
    const a = rel('a', 'new', [{ name: 'a', namespace: 'team-a' }]);
    expectStop(await gate(a, readsOf([a])), 'dependencyCycle', 'team-a/a → team-a/a');
  });

  it('a chain of depth 100 is refused as DependencyTooDeep, naming the bound', async () => {
    const chain = Array.from({ length: 100 }, (_, i) =>
      rel(`n${i}`, 'ready', i < 99 ? [{ name: `n${i + 1}` }] : []),
    );
    const reads = readsOf(chain);
    expectStop(await gate(chain[0], reads), 'dependencyTooDeep', `deeper than ${MAX_DEPTH}`);
    expect(reads.count).toBeLessThanOrEqual(MAX_DEPTH + 2);
  });

  it('DependencyTimeout once dependencyPolicy.timeout has passed since the wait began', async () => {
    const c = rel('c', 'new', [{ name: 'a' }], { policy: { timeout: '10m' } });
    const reads = readsOf([rel('a', 'new'), c]);
    const waiting = {
      type: 'Applied',
      status: 'False' as const,
      reason: 'DependencyNotReady',
      message: 'waits for Release team-a/a (Ready): not ready yet',
      lastTransitionTime: T,
      observedGeneration: 3,
    };
    expect(await gate(c, reads, { applied: waiting, timeoutMs: 60 * 60_000 })).toMatchObject({
      stop: 'dependencyNotReady',
    });
    expect(await gate(c, reads, { applied: waiting, timeoutMs: 10 * 60_000 })).toMatchObject({
      stop: 'dependencyTimeout',
      message: 'Release team-a/a (Ready) was not ready within dependencyPolicy.timeout 10m: not ready yet',
    });
  });
});

describe('dependsOn: upgrade ordering', () => {
  it('a dependency with a newer render in flight is unmet (Healthy still True from its previous render)', async () => {
    const b = rel('b', 'new', [{ name: 'a', condition: 'Healthy' }]);
    expect(await gate(b, readsOf([rel('a', 'upgrading'), b]))).toMatchObject({
      message: 'waits for Release team-a/a (Healthy): upgrading: a newer render of its own is in flight',
    });
  });

  it('upgradeOrdering: false — a dependency applied once counts while it upgrades', async () => {
    const b = rel('b', 'new', [{ name: 'a' }], { policy: { upgradeOrdering: false } });
    expect(await gate(b, readsOf([rel('a', 'upgrading'), b]))).toEqual({ kind: 'met' });
  });
});

describe('dependsOn: ReleaseSets', () => {
  it('Succeeded waits for the rollout of the current revision', async () => {
    const app = rel('app', 'new', [{ kind: 'ReleaseSet', name: 'mesh', condition: 'Succeeded' }]);
    expect(await gate(app, readsOf([app], [set('mesh', 'Progressing')]))).toMatchObject({
      stop: 'dependencyNotReady',
    });
    expect(await gate(app, readsOf([app], [set('mesh', 'Succeeded')]))).toEqual({ kind: 'met' });
  });
});

describe('dependsOn: another namespace', () => {
  const app = rel('app', 'new', [{ name: 'cert-manager', namespace: 'platform' }]);
  const cm = rel('cert-manager', 'ready', [], { namespace: 'platform' });

  it('refused without the allowing label, naming the rule', async () => {
    expectStop(await gate(app, readsOf([app, cm])), 'dependencyNotAllowed', 'convoy.dev/dependable-from');
  });

  it('accepted with convoy.dev/dependable-from: all, the namespace, or the per-namespace label', async () => {
    const allowing: Record<string, string>[] = [
      { 'convoy.dev/dependable-from': 'all' },
      { 'convoy.dev/dependable-from': 'team-a' },
      { 'dependable-from.convoy.dev/team-a': 'true' },
    ];
    for (const labels of allowing)
      expect(await gate(app, readsOf([app, cm], [], { platform: labels }))).toEqual({ kind: 'met' });
    expect(
      await gate(app, readsOf([app, cm], [], { platform: { 'convoy.dev/dependable-from': 'team-b' } })),
    ).toMatchObject({
      stop: 'dependencyNotAllowed',
    });
  });

  it("only the class of the other tenant's verdict reaches the message, never its words", async () => {
    const failing = rel('cert-manager', 'unhealthy', [], { namespace: 'platform' });
    const decided = await gate(
      app,
      readsOf([app, failing], [], { platform: { 'convoy.dev/dependable-from': 'all' } }),
    );
    expect(decided).toEqual({
      kind: 'stop',
      stop: 'dependencyNotReady',
      message: 'waits for Release platform/cert-manager (Ready): failed',
    });
  });
});

describe('dependsOn: the combined verdict of a dependent', () => {
  const withApplied = (reason: string) =>
    rel('c', 'ready', [], {
      applied: {
        type: 'Applied',
        status: 'False',
        reason,
        message: 'm',
        lastTransitionTime: T,
        observedGeneration: 3,
      },
    });

  it('DependencyNotReady is a wait; DependencyNotFound a retried wait; a cycle, depth, timeout or refusal a failure', () => {
    expect(combinedVerdict(withApplied('DependencyNotReady'))).toMatchObject({ ready: false, kind: 'wait' });
    expect(combinedVerdict(withApplied('DependencyNotFound'))).toMatchObject({
      kind: 'wait',
      retrying: true,
    });
    for (const reason of [
      'DependencyCycle',
      'DependencyTooDeep',
      'DependencyTimeout',
      'DependencyNotAllowed',
    ])
      expect(combinedVerdict(withApplied(reason))).toMatchObject({ ready: false, kind: 'failure' });
  });
});
