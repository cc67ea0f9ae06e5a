/**
 * spec.dependsOn on the real stack: the convoy dev runtime (relay → SQS → functions, the
 * observers) against the real apiserver. A waiting Release is woken by the relay when its
 * dependency's verdict changes, never by polling (its safety recheck is 5 minutes, longer than
 * any test here), so every "then" below is the relay's message at work.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Release } from '../../domain/api/objects.ts';
import { combinedVerdict } from '../../domain/status/verdict.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { appliedOf, startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: v}\n`;
const fastRetry = { retryBackoff: { initial: '1s', factor: 1, max: '1s' } };

describe('spec.dependsOn on the real stack', () => {
  let env: RuntimeEnv;
  let other: FreshNamespace | undefined;

  beforeAll(async () => {
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'depends-on', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
    });
  });
  afterAll(async () => {
    await other?.delete();
    await env?.close();
  });

  const git = (repo: string, path = '.') => ({
    source: { git: { url: `${env.git.url}/${repo}.git`, ref: { branch: 'main' }, path } },
  });
  const reason = async (name: string) => appliedOf(await env.getRelease(name))?.reason;
  const untilReason = (name: string, wanted: string, timeoutMs = 60_000) =>
    until(
      `${name} is Applied ${wanted}`,
      async () => {
        const release = await env.getRelease(name);
        return appliedOf(release)?.reason === wanted ? release : undefined;
      },
      { timeoutMs },
    );
  const untilReady = (name: string, timeoutMs = 90_000) =>
    until(
      `${name} is Ready`,
      async () => {
        const release = await env.getRelease(name);
        return combinedVerdict(release).ready ? release : undefined;
      },
      { timeoutMs },
    );
  const appliedAt = (release: Release) => Date.parse(release.status?.lastSuccessful?.attemptedAt ?? '');
  /** Reconcile runs of a Release (a duplicate delivery dropped as already handled is none). */
  const runs = (name: string) => env.recordLines(name, { msg: 'reconciled' }).length;

  it(
    'chain A → B → C: C waits naming B, B waits naming A; then A, B and C apply in order, each woken by the relay',
    { timeout: 300_000 },
    async () => {
      const ns = env.ns.name;
      await env.repo('chain-b', { 'cm.yaml': configMap('chain-b') });
      await env.repo('chain-c', { 'cm.yaml': configMap('chain-c') });
      // A's repository does not exist yet: A retries SourceNotReady, so it is not Ready. (Each is
      // created after what it depends on: one created first would be DependencyNotFound, retried
      // with backoff, and that retry would run again at rest.)
      await env.createRelease('chain-a', { ...git('chain-a'), syncPolicy: fastRetry });
      await env.createRelease('chain-b', { ...git('chain-b'), dependsOn: [{ name: 'chain-a' }] });
      await env.createRelease('chain-c', { ...git('chain-c'), dependsOn: [{ name: 'chain-b' }] });

      const c = await untilReason('chain-c', 'DependencyNotReady');
      expect(appliedOf(c)?.message).toBe(`waits for Release ${ns}/chain-b (Ready): not ready yet`);
      expect(c.status?.lastAttempted?.phase).toBe('');
      expect(c.status?.lastSuccessful).toBeUndefined();
      const b = await untilReason('chain-b', 'DependencyNotReady');
      expect(appliedOf(b)?.message).toBe(`waits for Release ${ns}/chain-a (Ready): not ready yet`);
      expect(await reason('chain-a')).toBe('SourceNotReady');

      // At rest — once B and C have not run for 3 s (the observers' first writes and the relay's
      // messages about them are behind) — A retries every second, which changes nothing B judges,
      // so neither B nor C runs: no polling.
      let seen = -1;
      await until(
        'B and C settle',
        () => {
          const now = runs('chain-b') + runs('chain-c');
          const settled = now === seen;
          seen = now;
          return settled;
        },
        { intervalMs: 3_000, timeoutMs: 90_000 },
      );
      const before = { b: runs('chain-b'), c: runs('chain-c') };
      const from = env.logs.length;
      await sleep(6_000);
      const atRest = env.logs
        .slice(from)
        .filter((l) => l.msg === 'reconciled' && ['chain-b', 'chain-c'].includes(String(l['name'])))
        .map((l) => `${String(l['name'])}: ${String(l['cause'])} (receive ${String(l['receiveCount'])})`);
      expect({ b: runs('chain-b'), c: runs('chain-c') }, atRest.join('; ')).toEqual(before);

      await env.repo('chain-a', { 'cm.yaml': configMap('chain-a') });
      const a = await untilReady('chain-a');
      const readyB = await untilReady('chain-b');
      const readyC = await untilReady('chain-c');
      expect(appliedAt(a)).toBeLessThanOrEqual(appliedAt(readyB));
      expect(appliedAt(readyB)).toBeLessThanOrEqual(appliedAt(readyC));
      expect(
        env
          .recordLines('chain-c')
          .some(
            (l) => typeof l['cause'] === 'string' && l['cause'].includes(`dependency Release ${ns}/chain-b`),
          ),
      ).toBe(true);
    },
  );

  it(
    'a cycle A → B → A: both DependencyCycle naming it; breaking it recovers both',
    { timeout: 300_000 },
    async () => {
      const ns = env.ns.name;
      await env.repo('cycle', { 'a/cm.yaml': configMap('cycle-a'), 'b/cm.yaml': configMap('cycle-b') });
      await env.createRelease('cycle-a', { ...git('cycle', 'a'), dependsOn: [{ name: 'cycle-b' }] });
      await env.createRelease('cycle-b', { ...git('cycle', 'b'), dependsOn: [{ name: 'cycle-a' }] });
      const a = await untilReason('cycle-a', 'DependencyCycle');
      const b = await untilReason('cycle-b', 'DependencyCycle');
      expect(appliedOf(a)?.message).toContain(`${ns}/cycle-a → ${ns}/cycle-b → ${ns}/cycle-a`);
      expect(appliedOf(b)?.message).toContain(`${ns}/cycle-b → ${ns}/cycle-a → ${ns}/cycle-b`);
      expect(combinedVerdict(a)).toMatchObject({ ready: false, kind: 'failure' });

      await env.api.patchMerge('Release', ns, 'cycle-a', { spec: { dependsOn: null } });
      await untilReady('cycle-a');
      await untilReady('cycle-b');
    },
  );

  it(
    'another namespace: refused without the allowing label (naming the rule), accepted with it',
    { timeout: 300_000 },
    async () => {
      other = await freshNamespace(env.kc, 'depends-on-other');
      await env.api.create('Release', other.name, 'platform-op', {
        cluster: { name: 'local' },
        ...git('never-there'),
      });
      await env.repo('tenant-app', { 'cm.yaml': configMap('tenant-app') });
      await env.createRelease('tenant-app', {
        ...git('tenant-app'),
        dependsOn: [{ name: 'platform-op', namespace: other.name }],
        syncPolicy: fastRetry,
      });
      const refused = await untilReason('tenant-app', 'DependencyNotAllowed');
      expect(appliedOf(refused)?.message).toContain(
        `namespace ${other.name} does not allow dependencies from namespace ${env.ns.name}`,
      );
      expect(appliedOf(refused)?.message).toContain('convoy.dev/dependable-from');

      await env.kc
        .makeApiClient(CoreV1Api)
        .patchNamespace(
          { name: other.name, body: { metadata: { labels: { 'convoy.dev/dependable-from': env.ns.name } } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      // Accepted: now it waits for the other tenant's Release, and learns only that it is not ready.
      const waiting = await untilReason('tenant-app', 'DependencyNotReady');
      expect(appliedOf(waiting)?.message).toBe(
        `waits for Release ${other.name}/platform-op (Ready): not ready yet`,
      );
    },
  );

  it(
    "upgrade ordering: A and B change together; B applies its new render only once A's new render is Ready (without upgradeOrdering, at once)",
    { timeout: 300_000 },
    async () => {
      await env.repo('upgrade', {
        'a1/cm.yaml': configMap('up-a1'),
        'b1/cm.yaml': configMap('up-b1'),
        'b2/cm.yaml': configMap('up-b2'),
        'c1/cm.yaml': configMap('up-c1'),
        'c2/cm.yaml': configMap('up-c2'),
      });
      await env.createRelease('up-a', { ...git('upgrade', 'a1'), syncPolicy: fastRetry });
      await env.createRelease('up-b', { ...git('upgrade', 'b1'), dependsOn: [{ name: 'up-a' }] });
      await env.createRelease('up-c', {
        ...git('upgrade', 'c1'),
        dependsOn: [{ name: 'up-a' }],
        dependencyPolicy: { upgradeOrdering: false },
      });
      for (const name of ['up-a', 'up-b', 'up-c']) await untilReady(name);

      // One change to all three: A's new folder is not committed yet, so A's new render cannot be made.
      const ns = env.ns.name;
      await Promise.all([
        env.api.patchMerge('Release', ns, 'up-a', { spec: { source: { git: { path: 'a2' } } } }),
        env.api.patchMerge('Release', ns, 'up-b', { spec: { source: { git: { path: 'b2' } } } }),
        env.api.patchMerge('Release', ns, 'up-c', { spec: { source: { git: { path: 'c2' } } } }),
      ]);
      const b = await untilReason('up-b', 'DependencyNotReady');
      expect(appliedOf(b)?.message).toBe(
        `waits for Release ${ns}/up-a (Ready): upgrading: a newer render of its own is in flight`,
      );
      const c = await until(
        'C applied its new render at once',
        async () => {
          const release = await env.getRelease('up-c');
          return appliedOf(release)?.reason === 'Applied' &&
            release.metadata.generation === appliedOf(release)?.observedGeneration
            ? release
            : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(c.status?.lastSuccessful?.renderRef).toBe(c.status?.lastAttempted?.renderRef);
      const bRenderBefore = b.status?.lastSuccessful?.renderRef;

      await env.commit('upgrade', { 'a2/cm.yaml': configMap('up-a2') });
      const a = await untilReady('up-a');
      const readyB = await untilReady('up-b');
      expect(readyB.status?.lastSuccessful?.renderRef).not.toBe(bRenderBefore);
      expect(appliedAt(a)).toBeLessThanOrEqual(appliedAt(readyB));
    },
  );
});
