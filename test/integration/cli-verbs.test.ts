/**
 * Every `convoy` verb against the real stack (the convoy dev runtime and the
 * real apiserver), run as a child process with a kubeconfig as a user would:
 * get, describe, sync, pin/unpin, history, rollback, suspend/resume, diff,
 * tree, events; RBAC (bob may not patch) and bad input.
 */
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeConfigFor } from '../harness/kube.ts';
import { runConvoy } from '../harness/cli.ts';
import { startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';
import type { Release } from '../../domain/api/objects.ts';

const configMap = (name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {greeting: ${value}}\n`;
const condition = (r: Release, type: string) => r.status?.conditions?.find((c) => c.type === type);

describe('the convoy verbs on the real stack', { timeout: 240_000 }, () => {
  const kubeconfig = inject('kubeconfigPath');
  let env: RuntimeEnv;
  let ready: Release;
  let firstCommit: string;
  const convoy = (...args: string[]) => runConvoy(args, kubeconfig);
  const key = () => `${env.ns.name}/app`;

  beforeAll(async () => {
    env = await startRuntimeEnv(kubeConfigFor(kubeconfig), 'cli-verbs', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
    });
    const repo = await env.repo('app', { 'cm.yaml': configMap('app-config', 'hello') });
    firstCommit = repo.commit;
    await env.createRelease('app', { source: { git: { url: repo.url, ref: { branch: 'main' } } } });
    ready = await until(
      'the Release is Applied, InSync and Healthy',
      async () => {
        const r = await env.getRelease('app');
        return ['Applied', 'InSync', 'Healthy'].every((t) => condition(r, t)?.status === 'True')
          ? r
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  }, 180_000);
  afterAll(async () => {
    await env?.close();
  });

  it('get lists the namespace with the verdict; get -A adds the namespace column; -o json prints the Release object', async () => {
    const list = await convoy('get', '-n', env.ns.name);
    expect(list.code).toBe(0);
    const [header, row] = list.stdout.trim().split('\n');
    expect(header).toMatch(/^NAME\s+VERDICT\s+APPLIED\s+ROLLOUT\s+RENDER\s+SUSPENDED\s+AGE$/);
    expect(row).toMatch(
      /^app\s+Ready \(health not assessed\)\s+Applied\s+Succeeded\s+[0-9a-f]{12}\s+false\s+\d+[smhd]$/,
    );
    const all = await convoy('get', '-A');
    expect(all.stdout.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+VERDICT/);
    expect(all.stdout).toMatch(new RegExp(`^${env.ns.name}\\s+app\\s+Ready`, 'm'));
    // -o json is the object as the API server returns it (kubectl's shape); the
    // verdict alone is `status -o json`.
    const json = JSON.parse((await convoy('get', key(), '-o', 'json')).stdout) as Release;
    expect(json).toMatchObject({
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'Release',
      metadata: { name: 'app' },
    });
    expect(json.status?.lastSuccessful?.renderRef).toBe(ready.status?.lastSuccessful?.renderRef);
    expect(JSON.parse((await convoy('status', key(), '-o', 'json')).stdout)).toMatchObject({ ready: true });
  });

  it('describe shows conditions, attempts, rollout, waves and the Events section', async () => {
    const run = await convoy('describe', key());
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`Name:        app`);
    expect(run.stdout).toMatch(/Verdict:\s+Ready/);
    expect(run.stdout).toMatch(/^\s+Applied\s+True\s+Applied\s/m);
    expect(run.stdout).toContain(`Last successful: Succeeded at`);
    expect(run.stdout).toContain(ready.status!.lastSuccessful!.renderRef!);
    expect(run.stdout).toMatch(/Rollout:\s+Succeeded sha256:/);
    expect(run.stdout).toMatch(/^Events:$/m);
  });

  it('sync and sync --force set the request annotations; bob (no patch right) gets a clear 403 line', async () => {
    expect((await convoy('sync', key())).code).toBe(0);
    expect((await convoy('sync', key(), '--force')).code).toBe(0);
    const annotations = (await env.getRelease('app')).metadata.annotations ?? {};
    expect(annotations['convoy.dev/sync-requested-at']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(annotations['convoy.dev/force-sync-requested-at']).toMatch(/^\d{4}-\d\d-\d\dT/);
    const bob = await runConvoy(['sync', key(), '--context', 'bob'], kubeconfig);
    expect(bob.code).toBe(1);
    expect(bob.stderr).toMatch(
      /^convoy: forbidden \(HTTP 403\): releases\.convoy\.dev "app" is forbidden: User "bob" cannot patch resource "releases"/,
    );
    expect(bob.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('history lists the renders the status names, with their roles', async () => {
    const run = await convoy('history', key());
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n')[0]).toMatch(/^TIME\s+REVISION\s+RENDER\s+ROLE$/);
    expect(run.stdout).toContain(ready.status!.lastSuccessful!.renderRef!);
    expect(run.stdout).toMatch(/attempted,applied/);
    expect(run.stdout).toContain(firstCommit.slice(0, 12));
  });

  it('pin takes a short ref, unpin removes the pin; an unknown or malformed ref is one line', async () => {
    const ref = ready.status!.lastSuccessful!.renderRef!;
    const pinned = await convoy('pin', key(), ref.slice(7, 17));
    expect(pinned.code).toBe(0);
    expect((await env.getRelease('app')).metadata.annotations?.['convoy.dev/pin']).toBe(ref);
    expect((await convoy('unpin', key())).code).toBe(0);
    expect((await env.getRelease('app')).metadata.annotations?.['convoy.dev/pin']).toBeUndefined();
    const unknown = await convoy('pin', key(), 'abcdef1234');
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      `convoy: render abcdef1234 does not exist for Release ${key()} (convoy history ${key()} lists its renders)\n`,
    ]);
    const malformed = await convoy('pin', key(), 'not-a-ref');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('rollback: with one render applied there is no previous one (exit 1); --last-healthy and a named render pin', async () => {
    // As with `helm rollback`, the default is the previous render (test/integration/cli-get-rollback.test.ts);
    // the last healthy render is --last-healthy.
    const first = await convoy('rollback', key());
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/has no previous render: [0-9a-f]{12} is the first it applied/);
    expect((await env.getRelease('app')).metadata.annotations?.['convoy.dev/pin']).toBeUndefined();
    const healthy = ready.status?.lastHealthy?.renderRef;
    const run = await convoy('rollback', key(), '--last-healthy');
    if (healthy === undefined) {
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('has no healthy render');
    } else {
      expect(run.code).toBe(0);
      expect((await env.getRelease('app')).metadata.annotations?.['convoy.dev/pin']).toBe(healthy);
    }
    const named = await convoy('rollback', key(), ready.status!.lastSuccessful!.renderRef!);
    expect(named.code).toBe(0);
    expect(named.stdout).toContain('rolled back: pinned to sha256:');
    expect((await env.getRelease('app')).metadata.annotations?.['convoy.dev/pin']).toBe(
      ready.status!.lastSuccessful!.renderRef,
    );
    expect((await convoy('unpin', key())).code).toBe(0);
  });

  it('suspend and resume set spec.suspend', async () => {
    expect((await convoy('suspend', key())).code).toBe(0);
    expect((await env.getRelease('app')).spec.suspend).toBe(true);
    expect((await convoy('resume', key())).code).toBe(0);
    expect((await env.getRelease('app')).spec.suspend).toBe(false);
  });

  it('tree shows each object of the applied render with sync and health', async () => {
    const run = await convoy('tree', key());
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`render ${ready.status!.lastSuccessful!.renderRef}`);
    expect(run.stdout).toMatch(new RegExp(`ConfigMap\\s+${env.ns.name}\\s+app-config\\s+Synced\\s+Healthy`));
  });

  it('diff: exit 0 without a difference; after a new commit, exit 1 and the changed field; --ref the old commit: no difference', async () => {
    const same = await convoy('diff', key());
    expect(same.code).toBe(0);
    expect(same.stderr).toMatch(/^no difference: 1 objects of render sha256:/);
    await env.commit('app', { 'cm.yaml': configMap('app-config', 'bonjour') });
    const changed = await convoy('diff', key());
    expect(changed.code).toBe(1);
    expect(changed.stdout).toContain(`~ ConfigMap ${env.ns.name}/app-config`);
    expect(changed.stdout).toMatch(/^\s+-\s+greeting: hello$/m);
    expect(changed.stdout).toMatch(/^\s+\+\s+greeting: bonjour$/m);
    expect(changed.stderr).toContain('1 of 1 objects');
    const old = await convoy('diff', key(), '--ref', `commit:${firstCommit}`);
    expect(old.code).toBe(0);
  });

  it('diff shows a field changed on the live object by hand (suspended, so no reconcile reverts it meanwhile)', async () => {
    expect((await convoy('suspend', key())).code).toBe(0);
    const core = env.kc.makeApiClient(CoreV1Api);
    await core.patchNamespacedConfigMap(
      { namespace: env.ns.name, name: 'app-config', body: { data: { greeting: 'edited-by-hand' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const run = await convoy('diff', key(), '--ref', `commit:${firstCommit}`);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^\s+-\s+greeting: edited-by-hand$/m);
    expect(run.stdout).toMatch(/^\s+\+\s+greeting: hello$/m);
    expect((await convoy('resume', key())).code).toBe(0);
  });

  it('diff names the cap instead of the lines when an object has more changed lines than the cap per object (2,000), as the relay diff does', async () => {
    expect((await convoy('suspend', key())).code).toBe(0);
    const data = Array.from({ length: 2_100 }, (_, i) => `  key-${i}: value-${i}`).join('\n');
    await env.commit('app', {
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\ndata:\n${data}\n`,
    });
    const run = await convoy('diff', key());
    expect(run.code).toBe(1);
    expect(run.stdout.trim().split('\n')).toEqual([
      `~ ConfigMap ${env.ns.name}/app-config`,
      '      diff skipped: object has over 2000 changed lines (cap per object)',
    ]);
    expect(run.stderr).toMatch(
      /^1 of 1 objects of render sha256:\S+ at revision \S+ differ from the live objects \(1 not diffed: over a cap, named on its line\)$/m,
    );
    await env.commit('app', { 'cm.yaml': configMap('app-config', 'bonjour') });
    expect((await convoy('resume', key())).code).toBe(0);
  });

  it('events lists what convoy wrote (or says there is none)', async () => {
    const run = await convoy('events', key());
    expect(run.code).toBe(0);
    expect(run.stdout + run.stderr).toMatch(/LAST SEEN|No Events/);
  });

  it('bad input: a missing Release, a missing argument, an unknown verb → one line, exit 1 / 2 / 2', async () => {
    const missing = await convoy('describe', `${env.ns.name}/nope`);
    expect([missing.code, missing.stderr]).toEqual([1, `convoy: Release ${env.ns.name}/nope not found\n`]);
    const noArg = await convoy('sync');
    expect(noArg.code).toBe(2);
    expect(noArg.stderr).toBe(
      'convoy: sync: missing the Release: convoy sync <name> [-n <namespace>] or <namespace>/<name> (see convoy sync --help)\n',
    );
    const verb = await convoy('frobnicate');
    expect([verb.code, verb.stderr]).toEqual([2, 'convoy: unknown command "frobnicate" (see convoy help)\n']);
  });
});
