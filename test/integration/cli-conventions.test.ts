/**
 * kubectl's conventions in `convoy`, on the real stack (the convoy dev runtime and the real
 * apiserver), the CLI run as a child process with a kubeconfig whose context names a namespace, as
 * a user's does:
 * - the context's namespace is every verb's default (then -n, then `default`); a context naming a
 *   namespace that does not exist fails in one line saying where the namespace came from;
 * - `get releases|release|rel`, `get releases.convoy.dev/<name>`, `get releases -A`;
 * - -o json|yaml in kubectl's key order (apiVersion, kind, metadata, spec, status; sorted inside);
 * - `wait` on several Releases and on `-l <selector>` [-A]: 0 only when every one is Ready, the
 *   first failure named.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import { runConvoy } from '../harness/cli.ts';
import { withContextNamespace } from '../harness/context-kubeconfig.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { convoyApi } from '../harness/releases.ts';
import { appliedOf, startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: v}\n`;
const condition = (r: Release, type: string) => r.status?.conditions?.find((c) => c.type === type);

describe(
  'kubectl conventions: the context namespace, kind words, key order, wait on several',
  { timeout: 240_000 },
  () => {
    const admin = inject('kubeconfigPath');
    let env: RuntimeEnv;
    let dir: string;
    let kubeconfig: string;
    let missingNs: string;
    let commit: string;
    const convoy = (...args: string[]) => runConvoy(args, kubeconfig);
    const ns = () => env.ns.name;

    beforeAll(async () => {
      env = await startRuntimeEnv(kubeConfigFor(admin), 'cli-conventions', {
        relayTickMs: 200,
        visibilityTimeoutSeconds: 5,
      });
      dir = await mkdtemp(join(tmpdir(), 'convoy-cli-conventions-'));
      kubeconfig = await withContextNamespace(admin, env.ns.name, join(dir, 'context-ns.yaml'));
      missingNs = await withContextNamespace(admin, 'no-such-namespace', join(dir, 'missing-ns.yaml'));
      const repo = await env.repo('app', { 'cm.yaml': configMap('app-config') });
      const git = { source: { git: { url: repo.url, ref: { branch: 'main' } } } };
      // A repository of its own: the live objects diff compares with are this Release's alone.
      const repoSource = await env.repo('repo-source', { 'cm.yaml': configMap('repo-config') });
      await convoyApi(kubeConfigFor(admin)).create('GitRepository', env.ns.name, 'app-repo', {
        url: repoSource.url,
        ref: { branch: 'main' },
      });
      await env.createRelease('fromrepo', { source: { gitRepositoryRef: { name: 'app-repo' } } });
      commit = repoSource.commit;
      await env.createRelease('one', git);
      await env.createRelease('two', git);
      await env.createRelease('bad', {
        source: { git: { url: 'ssh://git@example.com/apps.git', ref: { branch: 'main' } } },
      });
      const objects = kubeConfigFor(admin).makeApiClient(CustomObjectsApi);
      for (const [name, team] of [
        ['one', 'a'],
        ['two', 'a'],
        ['bad', 'b'],
      ] as const)
        await objects.patchNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          namespace: env.ns.name,
          plural: 'releases',
          name,
          // A JSON patch: the client's default patch type for custom objects.
          body: [{ op: 'add', path: '/metadata/labels', value: { team } }],
        });
      await until(
        'one and two are Applied, InSync and Healthy; bad is Unsupported',
        async () => {
          const ready = await Promise.all(
            ['one', 'two', 'fromrepo'].map(async (n) => {
              const r = await env.getRelease(n);
              return ['Applied', 'InSync', 'Healthy'].every((t) => condition(r, t)?.status === 'True');
            }),
          );
          return ready.every(Boolean) && appliedOf(await env.getRelease('bad'))?.reason === 'Unsupported';
        },
        { timeoutMs: 120_000, intervalMs: 250 },
      );
    }, 200_000);
    afterAll(async () => {
      await env?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("every verb takes the kubeconfig context's namespace when -n is not given; -n and <namespace>/<name> still choose", async () => {
      for (const args of [
        ['status', 'one'],
        ['describe', 'one'],
        ['tree', 'one'],
        ['events', 'one'],
        ['wait', 'one', '--timeout', '30s'],
      ]) {
        const run = await convoy(...args);
        expect(run.stderr, args.join(' ')).toBe('');
        expect(run.code, args.join(' ')).toBe(0);
      }
      const listed = await convoy('get');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(/^one\s+Ready/m);
      expect(listed.stdout).toMatch(/^two\s+Ready/m);
      const sync = await convoy('sync', 'one');
      expect(sync.stdout).toContain(`sync requested for ${ns()}/one`);
      // -n wins over the context's namespace, and so does <namespace>/<name>.
      const elsewhere = await convoy('status', 'one', '-n', 'default');
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.stderr).toBe('convoy: Release default/one not found\n');
      const qualified = await runConvoy(['status', `${ns()}/one`], missingNs);
      expect(qualified.code).toBe(0);
    });

    it('a context naming a namespace that does not exist: one line saying where the namespace came from', async () => {
      const run = await runConvoy(['status', 'one'], missingNs);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^convoy: Release no-such-namespace\/one not found \(namespace no-such-namespace is the kubeconfig context [^ ]+'s; -n <namespace> for another\)\n$/,
      );
      const listed = await runConvoy(['get'], missingNs);
      expect(listed.stderr).toBe('No Releases found in namespace no-such-namespace.\n');
    });

    it('get names the kind as kubectl does: releases, release <name>, rel, releases.convoy.dev/<name>, and -A with it', async () => {
      for (const kind of ['releases', 'release', 'rel']) {
        const run = await convoy('get', kind);
        expect(run.code, kind).toBe(0);
        expect(run.stdout, kind).toMatch(/^NAME\s+VERDICT/);
        expect(run.stdout, kind).toMatch(/^one\s+Ready/m);
      }
      for (const named of [['release', 'one'], ['releases.convoy.dev/one']]) {
        const run = await convoy('get', ...named, '-o', 'name');
        expect(run.stdout, named.join(' ')).toBe('release.convoy.dev/one\n');
      }
      const all = await convoy('get', 'releases', '-A');
      expect(all.code).toBe(0);
      expect(all.stdout).toMatch(new RegExp(`^${ns()}\\s+bad\\s+`, 'm'));
      const sets = await convoy('get', 'releasesets', '-A');
      expect(sets.code).toBe(0);
    });

    it("-o yaml and -o json print kubectl's key order: apiVersion, kind, metadata, spec, status, each level sorted", async () => {
      const sorted = (o: object) => [...Object.keys(o)].sort();
      const yaml = await convoy('get', 'release', 'one', '-o', 'yaml');
      expect(yaml.stdout).toMatch(/^apiVersion: convoy\.dev\/v1alpha1\nkind: Release\nmetadata:\n/);
      const object = parseYaml(yaml.stdout) as Record<string, Record<string, unknown>>;
      expect(Object.keys(object)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
      expect(Object.keys(object['metadata'] ?? {})).toEqual(sorted(object['metadata'] ?? {}));
      expect(Object.keys(object['spec'] ?? {})).toEqual(sorted(object['spec'] ?? {}));
      const list = JSON.parse((await convoy('get', '-o', 'json')).stdout) as { items: object[] };
      for (const item of list.items)
        expect(Object.keys(item)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    });

    it('wait on several Releases: 0 when all are Ready; the first failure ends it, named', async () => {
      const both = await convoy('wait', 'one', `${ns()}/two`, '--timeout', '30s');
      expect(both.code).toBe(0);
      expect(both.stdout).toMatch(new RegExp(`^${ns()}/one: Ready`, 'm'));
      expect(both.stdout).toMatch(new RegExp(`^${ns()}/two: Ready`, 'm'));
      const failing = await convoy('wait', 'one', 'bad', '--timeout', '30s');
      expect(failing.code).toBe(1);
      expect(failing.stderr).toMatch(
        new RegExp(`^convoy: ${ns()}/bad: Failed \\(Applied\\): .*Unsupported`, 'm'),
      );
    });

    it('wait -l: every Release the selector lists (in the context namespace, or -A), with the same exit codes', async () => {
      const team = await convoy('wait', '-l', 'team=a', '--timeout', '30s');
      expect(team.code).toBe(0);
      expect(team.stdout.trim().split('\n').sort()).toEqual([
        expect.stringMatching(new RegExp(`^${ns()}/one: Ready`)),
        expect.stringMatching(new RegExp(`^${ns()}/two: Ready`)),
      ]);
      const everywhere = await convoy('wait', '-l', 'team=a', '-A', '--timeout', '30s');
      expect(everywhere.code).toBe(0);
      const failing = await convoy('wait', '-l', 'team', '--timeout', '30s');
      expect(failing.code).toBe(1);
      expect(failing.stderr).toMatch(new RegExp(`convoy: ${ns()}/bad: Failed`));
      const none = await convoy('wait', '-l', 'team=nobody');
      expect(none.code).toBe(1);
      expect(none.stderr).toBe(`convoy: no Releases match -l team=nobody in namespace ${ns()}\n`);
      const both = await convoy('wait', 'one', '-l', 'team=a');
      expect(both.code).toBe(2);
    });

    it('diff --ref renders a gitRepositoryRef source: its GitRepository at that ref', async () => {
      for (const ref of ['branch:main', `commit:${commit}`]) {
        const run = await convoy('diff', 'fromrepo', '--ref', ref);
        expect(run.stderr, ref).toMatch(
          /^no difference: 1 objects of render sha256:[0-9a-f]+ at revision [0-9a-f]{40} match the live objects\n$/,
        );
        expect(run.code, ref).toBe(0);
      }
      const missing = await convoy('diff', 'fromrepo', '--ref', 'branch:no-such-branch');
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^convoy: cannot render .*fromrepo: /);
    });

    it('sync --wait returns the verdict of the reconcile the request brought: after a new commit, Ready at that commit', async () => {
      const { commit: next } = await env.commit('repo-source', { 'cm.yaml': configMap('repo-config-2') });
      const run = await convoy('sync', 'fromrepo', '--wait', '--timeout', '120s');
      expect(run.stdout).toMatch(new RegExp(`^sync requested for ${ns()}/fromrepo at \\S+Z`));
      expect(run.stdout).toMatch(/^Ready/m);
      expect(run.code).toBe(0);
      const synced = await env.getRelease('fromrepo');
      expect(synced.status?.lastAttempted?.resolvedSource?.git?.commit).toBe(next);
      const refused = await convoy('sync', 'fromrepo', '--timeout', '1m');
      expect(refused.code).toBe(2);
    });
  },
);
