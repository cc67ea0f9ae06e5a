/**
 * The command line as flux/argocd/helm users expect it, on the real stack (the convoy dev
 * runtime and the real apiserver), the CLI run as a child process with a kubeconfig as a user
 * would:
 * - `get -o json|yaml` prints the objects whole (kubectl's shapes), `-l` selects by label, `-A`
 *   lists every namespace, `-w` prints a change made after it started;
 * - `rollback` pins the render applied before the current one (and the reconcile applies it),
 *   a second rollback goes forward again, `--last-healthy` and `--to` pin those, `unpin` follows
 *   Git again.
 */
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeConfigFor } from '../harness/kube.ts';
import { runConvoy, startConvoy } from '../harness/cli.ts';
import { startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';
import type { Release } from '../../domain/api/objects.ts';

const configMap = (name: string, value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {greeting: ${value}}\n`;
const condition = (r: Release, type: string) => r.status?.conditions?.find((c) => c.type === type);
const short = (ref: string | undefined) => (ref ?? '').replace(/^sha256:/, '').slice(0, 12);

describe('convoy get -o/-l/-A/-w and convoy rollback on the real stack', { timeout: 480_000 }, () => {
  const kubeconfig = inject('kubeconfigPath');
  let env: RuntimeEnv;
  const commits: string[] = [];
  const convoy = (...args: string[]) => runConvoy(args, kubeconfig);
  const ns = () => env.ns.name;

  const label = async (name: string, labels: Record<string, string>) => {
    await env.kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
      {
        group: 'convoy.dev',
        version: 'v1alpha1',
        namespace: ns(),
        plural: 'releases',
        name,
        body: { metadata: { labels } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  };
  const greeting = async (name: string) =>
    (await env.kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace: ns(), name })).data?.[
      'greeting'
    ];
  const applied = (name: string, predicate: (r: Release) => boolean, what: string) =>
    until(
      what,
      async () => {
        const r = await env.getRelease(name);
        return condition(r, 'Applied')?.status === 'True' && predicate(r) ? r : undefined;
      },
      { timeoutMs: 150_000, intervalMs: 250 },
    );

  beforeAll(async () => {
    env = await startRuntimeEnv(kubeConfigFor(kubeconfig), 'cli-get', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
    });
    const app = await env.repo('app', { 'cm.yaml': configMap('app-config', 'one') });
    commits.push(app.commit);
    const other = await env.repo('other', { 'cm.yaml': configMap('other-config', 'x') });
    await env.createRelease('app', { source: { git: { url: app.url, ref: { branch: 'main' } } } });
    await env.createRelease('other', { source: { git: { url: other.url, ref: { branch: 'main' } } } });
    await label('app', { team: 'a' });
    await label('other', { team: 'b' });
    await applied('app', (r) => r.status?.lastSuccessful?.renderRef !== undefined, 'app is Applied');
    await applied('other', (r) => r.status?.lastSuccessful?.renderRef !== undefined, 'other is Applied');
  }, 240_000);
  afterAll(async () => {
    await env?.close();
  });

  it('get <release> -o json prints the Release object as the API server returns it, without managedFields unless asked', async () => {
    const run = await convoy('get', 'app', '-n', ns(), '-o', 'json');
    expect(run.code).toBe(0);
    const object = JSON.parse(run.stdout) as Release & {
      metadata: { managedFields?: unknown; labels?: Record<string, string> };
    };
    const live = await env.getRelease('app');
    expect(object).toMatchObject({
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'Release',
      metadata: { name: 'app', namespace: ns(), uid: live.metadata.uid, labels: { team: 'a' } },
    });
    expect(object.spec.source).toEqual(live.spec.source);
    expect(object.status?.conditions?.map((c) => c.type)).toEqual(
      expect.arrayContaining(['Applied', 'InSync']),
    );
    expect(object.metadata.managedFields).toBeUndefined();
    const withFields = JSON.parse(
      (await convoy('get', 'app', '-n', ns(), '-o', 'json', '--show-managed-fields')).stdout,
    ) as { metadata: { managedFields?: unknown[] } };
    expect(withFields.metadata.managedFields?.length).toBeGreaterThan(0);
  });

  it('get -o yaml without a name prints a List of every Release of the namespace', async () => {
    const run = await convoy('get', '-n', ns(), '-o', 'yaml');
    expect(run.code).toBe(0);
    const list = parseYaml(run.stdout) as { apiVersion: string; kind: string; items: Release[] };
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items.map((r) => [r.kind, r.metadata.name]).sort()).toEqual([
      ['Release', 'app'],
      ['Release', 'other'],
    ]);
    expect(list.items.every((r) => r.status?.lastSuccessful?.renderRef !== undefined)).toBe(true);
  });

  it('get -l selects by label (table, json, -o name); no match says so; a name with -l is a usage error', async () => {
    const table = await convoy('get', '-n', ns(), '-l', 'team=a');
    expect(table.code).toBe(0);
    const rows = table.stdout.trim().split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatch(/^app\s/);
    const json = JSON.parse(
      (await convoy('get', '-n', ns(), '--selector', 'team!=a', '-o', 'json')).stdout,
    ) as { items: Release[] };
    expect(json.items.map((r) => r.metadata.name)).toEqual(['other']);
    expect(
      (await convoy('get', '-n', ns(), '-l', 'team in (a,b)', '-o', 'name')).stdout.trim().split('\n').sort(),
    ).toEqual(['release.convoy.dev/app', 'release.convoy.dev/other']);
    const none = await convoy('get', '-n', ns(), '-l', 'team=nobody');
    expect([none.code, none.stdout, none.stderr]).toEqual([
      0,
      '',
      `No Releases found in namespace ${ns()}.\n`,
    ]);
    const both = await convoy('get', 'app', '-n', ns(), '-l', 'team=a');
    expect([both.code, both.stderr]).toEqual([
      2,
      'convoy: get: -l selects Releases by label; do not name one (see convoy get --help)\n',
    ]);
  });

  it('get -A lists every namespace with a NAMESPACE column, and combines with -l and -o wide', async () => {
    const run = await convoy('get', '-A', '-l', 'team=b', '-o', 'wide');
    expect(run.code).toBe(0);
    const [header, ...rows] = run.stdout.trim().split('\n');
    expect(header).toMatch(
      /^NAMESPACE\s+NAME\s+VERDICT\s+APPLIED\s+ROLLOUT\s+RENDER\s+SUSPENDED\s+AGE\s+REVISION\s+SOURCE\s+MESSAGE$/,
    );
    expect(rows.filter((r) => r.startsWith(`${ns()} `))).toEqual([
      expect.stringMatching(new RegExp(`^${ns()}\\s+other\\s+.*/other\\.git\\s`)),
    ]);
    const everything = await convoy('get', '-A', '-o', 'name');
    expect(everything.stdout).toContain('release.convoy.dev/app');
  });

  it('get -w prints the list, then a change made after it started (suspend), until it is stopped', async () => {
    const watch = startConvoy(['get', '-n', ns(), '-l', 'team=a', '-w'], kubeconfig);
    try {
      await until(
        'the watch printed the list',
        () => /^app\s.*\sfalse\s/m.test(watch.stdout()) || watch.exited(),
        { timeoutMs: 30_000 },
      );
      expect(watch.exited()).toBe(false);
      expect(watch.stdout()).not.toMatch(/^app\s.*\strue\s/m);
      expect((await convoy('suspend', `${ns()}/app`)).code).toBe(0);
      await until(
        'the watch printed the suspended Release',
        () => /^app\s.*\strue\s/m.test(watch.stdout()) || watch.exited(),
        { timeoutMs: 30_000 },
      );
      expect(watch.exited()).toBe(false);
    } finally {
      watch.kill();
    }
    const run = await watch.done;
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+VERDICT/);
    expect(lines.filter((l) => l.startsWith('other'))).toEqual([]);
    expect(lines.findIndex((l) => /^app\s.*\strue\s/.test(l))).toBeGreaterThan(
      lines.findIndex((l) => /^app\s.*\sfalse\s/.test(l)),
    );
    expect(run.stderr).toBe('');
    expect((await convoy('resume', `${ns()}/app`)).code).toBe(0);
  });

  it('rollback pins the render applied before the current one, the reconcile applies it; again goes forward; unpin follows Git', async () => {
    const first = (await env.getRelease('app')).status?.lastSuccessful?.renderRef;
    expect(first).toBeDefined();
    const { commit } = await env.commit('app', { 'cm.yaml': configMap('app-config', 'two') });
    commits.push(commit);
    expect((await convoy('sync', `${ns()}/app`)).code).toBe(0); // as flux reconcile: read the new commit now
    const moved = await applied(
      'app',
      (r) => r.status?.lastSuccessful?.resolvedSource?.git?.commit === commit,
      'app applied the second commit',
    );
    const second = moved.status?.lastSuccessful?.renderRef;
    expect(moved.status?.rollout).toMatchObject({ renderRef: second, previousRenderRef: first });
    expect(await greeting('app-config')).toBe('two');

    const back = await convoy('rollback', `${ns()}/app`);
    expect(back.code).toBe(0);
    // The revision is named when the status still knows it (lastHealthy may still be that render).
    expect(back.stdout).toMatch(
      new RegExp(
        `^${ns()}/app rolled back: pinned to ${first} \\(the render applied before ${short(second)}(, revision ${commits[0]?.slice(0, 12)})?\\); it no longer follows Git: convoy unpin ${ns()}/app resumes following Git\\n$`,
      ),
    );
    expect((await env.getRelease('app')).metadata.annotations?.['convoy.dev/pin']).toBe(first);
    await until('the first render is live again', async () => (await greeting('app-config')) === 'one', {
      timeoutMs: 150_000,
    });
    const pinned = await applied(
      'app',
      (r) => r.status?.rollout?.renderRef === first,
      'the pinned render is the rollout',
    );
    expect(pinned.status?.pin).toMatchObject({ renderRef: first, state: 'Active' });

    // Like helm rollback: the previous render is now the second one.
    const forward = await convoy('rollback', `${ns()}/app`);
    expect(forward.code).toBe(0);
    expect(forward.stdout).toContain(`pinned to ${second} (the render applied before ${short(first)}`);
    expect((await env.getRelease('app')).metadata.annotations?.['convoy.dev/pin']).toBe(second);

    const to = await convoy('rollback', `${ns()}/app`, '--to', short(first));
    expect(to.code).toBe(0);
    expect(to.stdout).toContain(`pinned to ${first} (the render named`);
    // --last-healthy pins what status.lastHealthy names when the CLI reads it (the health loop
    // may move it meanwhile): one of the two renders, and the annotation is the one printed.
    const lastHealthy = await convoy('rollback', `${ns()}/app`, '--last-healthy');
    expect(lastHealthy.code).toBe(0);
    const printed = /pinned to (sha256:[0-9a-f]{64}) \(the last healthy render/.exec(lastHealthy.stdout)?.[1];
    expect([first, second]).toContain(printed);
    expect((await env.getRelease('app')).metadata.annotations?.['convoy.dev/pin']).toBe(printed);
    const conflicting = await convoy('rollback', `${ns()}/app`, '--to', short(first), '--last-healthy');
    expect([conflicting.code, conflicting.stderr.trim().split('\n').length]).toEqual([2, 1]);

    expect((await convoy('unpin', `${ns()}/app`)).code).toBe(0);
    await until('the Git head is live again', async () => (await greeting('app-config')) === 'two', {
      timeoutMs: 150_000,
    });
  });

  it('rollback of a Release that applied one render only: exit 1, one line saying to name one with --to', async () => {
    const run = await convoy('rollback', `${ns()}/other`);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        `^convoy: Release ${ns()}/other has no previous render: [0-9a-f]{12} is the first it applied; name one with convoy rollback ${ns()}/other --to <renderRef> \\(convoy history ${ns()}/other lists them\\)\\n$`,
      ),
    );
    expect((await env.getRelease('other')).metadata.annotations?.['convoy.dev/pin']).toBeUndefined();
  });
});
