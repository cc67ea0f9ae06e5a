// The reconcile pipeline end to end: Helm values layers, determinism, no-op
// re-runs, pruning, Mutations, GitRepository and Helm repository sources.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ReconcilePorts, TargetCluster } from '../../domain/reconcile/ports.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';
import { startHelmRepo } from '../harness/helm-repo.ts';

const cm = (name: string, data: Record<string, string> = { k: 'v' }) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: ${JSON.stringify(data)}\n`;

/** The real ports, with the target's apply calls counted (every object write goes through apply). */
function countingWrites(ports: ReconcilePorts): { ports: ReconcilePorts; writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    ports: {
      ...ports,
      cluster: {
        async resolve(release) {
          const target = await ports.cluster.resolve(release);
          const counted: TargetCluster = {
            ...target,
            apply: async (obj) => {
              writes.push(`${obj.kind}/${obj.metadata.name}`);
              await target.apply(obj);
            },
          };
          return counted;
        },
      },
    },
  };
}

describe('reconcile pipeline', () => {
  let env: ReconcileEnv;
  let core: CoreV1Api;
  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'reconcile-pipeline');
    core = env.kc.makeApiClient(CoreV1Api);
  });
  afterAll(() => env.close());

  const create = (name: string, spec: Record<string, unknown>, labels?: Record<string, string>) =>
    env.api.create(
      'Release',
      env.ns.name,
      name,
      { cluster: { name: 'local' }, targetNamespace: env.ns.name, ...spec },
      labels ? { labels } : {},
    );

  it('a Helm chart with three values layers renders the merged values (later wins, inline last)', async () => {
    const chart = await env.repo('layered-chart', {
      'Chart.yaml': 'apiVersion: v2\nname: layered\nversion: 0.1.0\n',
      'values.yaml': 'a: chart\nb: chart\nc: chart\nd: chart\ne: chart\n',
      'templates/cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: layered}\ndata:\n  a: {{ .Values.a | quote }}\n  b: {{ .Values.b | quote }}\n  c: {{ .Values.c | quote }}\n  d: {{ .Values.d | quote }}\n  e: {{ .Values.e | quote }}\n',
    });
    await env.repo('platform-values', { 'values/prod.yaml': 'c: gitrepo\nd: gitrepo\n' });
    await env.api.create('GitRepository', env.ns.name, 'platform', {
      url: `${env.git.url}/platform-values.git`,
      ref: { branch: 'main' },
    });
    await core.createNamespacedConfigMap({
      namespace: env.ns.name,
      body: {
        metadata: { name: 'layer-cm' },
        data: { 'values.yaml': 'a: configmap\nb: configmap\nc: configmap\n' },
      },
    });
    await core.createNamespacedSecret({
      namespace: env.ns.name,
      body: { metadata: { name: 'layer-secret' }, stringData: { custom: 'b: secret\nc: secret\n' } },
    });
    await create('layered', {
      source: { git: { url: chart.url, ref: { branch: 'main' } } },
      content: {
        type: 'Helm',
        helm: {
          values: { d: 'inline' },
          valuesFrom: [
            { kind: 'ConfigMap', name: 'layer-cm' },
            { kind: 'Secret', name: 'layer-secret', key: 'custom' },
            { kind: 'GitRepository', name: 'platform', path: 'values/prod.yaml' },
          ],
        },
      },
    });
    const result = await env.reconcile('layered');
    expect(result.release.status?.conditions?.find((c) => c.type === 'Applied')).toMatchObject({
      reason: 'Applied',
    });
    const out = await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'layered' });
    expect(out.data).toEqual({ a: 'configmap', b: 'secret', c: 'gitrepo', d: 'inline', e: 'chart' });
  });

  it('two runs with the same inputs give the same renderRef, and the second writes no object', async () => {
    const repo = await env.repo('stable', {
      'a.yaml': cm('stable-a'),
      'b.yaml': cm('stable-b'),
      'c.yaml': cm('stable-c'),
    });
    await create('stable', { source: { git: { url: repo.url, ref: { branch: 'main' } } } });
    const first = countingWrites(env.ports());
    const run1 = await env.reconcile('stable', first.ports);
    expect(first.writes).toHaveLength(3);
    const rv = (await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'stable-a' })).metadata
      ?.resourceVersion;
    const second = countingWrites(env.ports());
    const run2 = await env.reconcile('stable', second.ports);
    expect(run2.release.status?.lastAttempted?.renderRef).toBe(run1.release.status?.lastAttempted?.renderRef);
    expect(second.writes).toEqual([]);
    expect(
      (await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'stable-a' })).metadata
        ?.resourceVersion,
    ).toBe(rv);
    // Settled: the observers' interval checks ride on this run (domain/status/observer-ticks.ts).
    expect(run2.notified.sort()).toEqual(['drift', 'health']);
  });

  it('pruning removes exactly the dropped objects (and never another Release’s or a prune: disabled one)', async () => {
    const repo = await env.repo('prune', {
      'keep.yaml': cm('p-keep'),
      'drop.yaml': cm('p-drop'),
      'sticky.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p-sticky, annotations: {convoy.dev/prune: disabled}}\n',
    });
    await create('prune', { source: { git: { url: repo.url, ref: { branch: 'main' } } } });
    await env.reconcile('prune');
    await core.createNamespacedConfigMap({
      namespace: env.ns.name,
      body: { metadata: { name: 'p-bystander' } },
    });
    await env.commit('prune', { 'drop.yaml': null, 'sticky.yaml': null });
    const result = await env.reconcile('prune');
    expect(result.release.status?.conditions?.find((c) => c.type === 'Applied')?.reason).toBe('Applied');
    const names = (await core.listNamespacedConfigMap({ namespace: env.ns.name })).items.map(
      (i) => i.metadata?.name,
    );
    expect(names).toContain('p-keep');
    expect(names).not.toContain('p-drop');
    expect(names).toContain('p-sticky');
    expect(names).toContain('p-bystander');
  });

  it('Mutations apply in order and are recorded in resolvedMutations', async () => {
    const repo = await env.repo('mutated', {
      'd.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 1, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: "ghcr.io/org/web:1.0"}]}}}\n',
    });
    await env.api.create('Mutation', env.ns.name, 'b-replicas', {
      releaseSelector: { matchLabels: { tier: 'prod' } },
      order: 20,
      patches: [
        {
          target: { kind: 'Deployment', name: 'web' },
          type: 'JSON6902',
          patch: [{ op: 'replace', path: '/spec/replicas', value: 3 }],
        },
      ],
    });
    await env.api.create('Mutation', env.ns.name, 'a-labels', {
      releaseSelector: { matchLabels: { tier: 'prod' } },
      order: 10,
      commonLabels: { team: 'a' },
      images: [{ name: 'ghcr.io/org/web', newTag: '1.1' }],
    });
    await env.api.create('Mutation', env.ns.name, 'other-tier', {
      releaseSelector: { matchLabels: { tier: 'dev' } },
      commonLabels: { x: 'y' },
    });
    await create(
      'mutated',
      { source: { git: { url: repo.url, ref: { branch: 'main' } } } },
      { tier: 'prod' },
    );
    const result = await env.reconcile('mutated');
    expect(result.release.status?.lastAttempted?.resolvedMutations?.map((m) => m.name)).toEqual([
      'a-labels',
      'b-replicas',
    ]);
    const { AppsV1Api } = await import('@kubernetes/client-node');
    const web = await env.kc
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ namespace: env.ns.name, name: 'web' });
    expect(web.spec?.replicas).toBe(3);
    expect(web.metadata?.labels?.['team']).toBe('a');
    expect(web.metadata?.labels?.['x']).toBeUndefined();
    expect(web.spec?.template.spec?.containers[0]?.image).toBe('ghcr.io/org/web:1.1');
  });

  it('a GitRepository reference is a source', async () => {
    await env.repo('shared-apps', { 'team/cm.yaml': cm('from-gitrepo') });
    await env.api
      .create('GitRepository', env.ns.name, 'shared', {
        url: `${env.git.url}/shared-apps.git`,
        ref: { tag: 'v1' },
      })
      .catch(() => undefined);
    await env.commit('shared-apps', {}).catch(() => undefined);
    await env.api.create('GitRepository', env.ns.name, 'shared-main', {
      url: `${env.git.url}/shared-apps.git`,
      ref: { branch: 'main' },
    });
    await create('via-gitrepo', { source: { gitRepositoryRef: { name: 'shared-main', path: 'team' } } });
    const result = await env.reconcile('via-gitrepo');
    expect(result.release.status?.lastAttempted?.resolvedSource?.git).toMatchObject({
      url: `${env.git.url}/shared-apps.git`,
      ref: 'refs/heads/main',
    });
    await expect(
      core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'from-gitrepo' }),
    ).resolves.toBeDefined();
  });

  it('a Helm repository source: a semver range picks the highest version and records the digest', async () => {
    const dirs: string[] = [];
    for (const version of ['1.0.0', '1.2.0', '2.0.0']) {
      const dir = await mkdtemp(join(tmpdir(), 'chart-'));
      await mkdir(join(dir, 'templates'));
      await writeFile(join(dir, 'Chart.yaml'), `apiVersion: v2\nname: podinfo\nversion: ${version}\n`);
      await writeFile(
        join(dir, 'templates/cm.yaml'),
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: podinfo-version}\ndata: {version: "${version}"}\n`,
      );
      dirs.push(dir);
    }
    const repo = await startHelmRepo({ charts: dirs.map((dir) => ({ dir })) });
    env.allowEgress(new URL(repo.url).host); // on 127.0.0.1: the egress allow list opens exactly it
    try {
      await create('from-helm', {
        source: { helm: { repository: repo.url, chart: 'podinfo', version: '1.x' } },
        content: { type: 'Helm' },
      });
      const result = await env.reconcile('from-helm');
      expect(result.release.status?.lastAttempted?.resolvedSource?.helm).toMatchObject({
        chart: 'podinfo',
        version: '1.2.0',
      });
      expect(result.release.status?.lastAttempted?.resolvedSource?.helm?.digest).toMatch(
        /^sha256:[0-9a-f]{64}$/,
      );
      const out = await core.readNamespacedConfigMap({ namespace: env.ns.name, name: 'podinfo-version' });
      expect(out.data?.['version']).toBe('1.2.0');
    } finally {
      await repo.stop();
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });
});

describe('bad input ends in the reason the spec names, with a message naming the file or object', () => {
  let env: ReconcileEnv;
  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'reconcile-bad-input');
  });
  afterAll(() => env.close());

  const rows: {
    name: string;
    files: Record<string, string | { symlink: string }>;
    content?: Record<string, unknown>;
    reason: string;
    names: RegExp;
  }[] = [
    {
      name: 'an object without kind',
      files: { 'nokind.yaml': 'apiVersion: v1\nmetadata: {name: x}\n' },
      reason: 'DeployFailed',
      names: /nokind\.yaml.*kind/,
    },
    {
      name: 'an alias-bomb YAML',
      files: {
        'bomb.yaml':
          'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n',
      },
      reason: 'DeployFailed',
      names: /bomb\.yaml/,
    },
    {
      name: 'a huge YAML file',
      files: {
        'huge.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: huge}\ndata: {x: "${'y'.repeat(11 * 1024 * 1024)}"}\n`,
      },
      reason: 'DeployFailed',
      names: /huge\.yaml/,
    },
    {
      name: 'a Helm chart that fails to template',
      files: {
        'Chart.yaml': 'apiVersion: v2\nname: broken\nversion: 0.1.0\n',
        'templates/x.yaml': '{{ fail "this chart refuses" }}\n',
      },
      content: { type: 'Helm' },
      reason: 'DeployFailed',
      names: /this chart refuses/,
    },
    {
      name: 'a symlinked path that leaves the checkout',
      files: { app: { symlink: '../../../../etc' } },
      reason: 'Unsupported',
      names: /spec\.source\.git\.path|outside/,
    },
  ];

  for (const row of rows) {
    it(`${row.name} → ${row.reason}`, async () => {
      const slug = row.name.replace(/[^a-z]+/g, '-').replace(/^-|-$/g, '');
      const repo = await env.repo(slug, row.files);
      await env.api.create('Release', env.ns.name, slug, {
        cluster: { name: 'local' },
        targetNamespace: env.ns.name,
        source: {
          git: {
            url: repo.url,
            ref: { branch: 'main' },
            ...(row.name.includes('symlink') ? { path: 'app' } : {}),
          },
        },
        ...(row.content ? { content: row.content } : {}),
      });
      const result = await env.reconcile(slug);
      const applied = result.release.status?.conditions?.find((c) => c.type === 'Applied');
      expect(applied?.reason).toBe(row.reason);
      expect(applied?.message).toMatch(row.names);
    });
  }

  it('a values layer that is not YAML → ValuesNotReady, naming the layer and never quoting a Secret', async () => {
    const chart = await env.repo('values-chart', {
      'Chart.yaml': 'apiVersion: v2\nname: v\nversion: 0.1.0\n',
      'templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: v}\n',
    });
    const core = env.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({
      namespace: env.ns.name,
      body: {
        metadata: { name: 'bad-values' },
        stringData: { 'values.yaml': 'password: "hunter2\n  : : [' },
      },
    });
    await env.api.create('Release', env.ns.name, 'bad-values', {
      cluster: { name: 'local' },
      source: { git: { url: chart.url, ref: { branch: 'main' } } },
      content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'Secret', name: 'bad-values' }] } },
    });
    const result = await env.reconcile('bad-values');
    const applied = result.release.status?.conditions?.find((c) => c.type === 'Applied');
    expect(applied?.reason).toBe('ValuesNotReady');
    expect(applied?.message).toContain('Secret');
    expect(applied?.message).toContain('bad-values');
    expect(JSON.stringify(result.release.status)).not.toContain('hunter2');
  });
});
