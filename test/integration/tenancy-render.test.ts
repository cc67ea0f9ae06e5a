// The render sandbox, played as the attacker on the real apiserver: a tenant pushes content to its
// own Git repository (served over smart HTTP) that tries to read files of the machine that
// renders — the management cluster's admin kubeconfig above all — through symbolic links in a
// Helm chart, a symlinked template, a values layer, and a Kustomize base outside the checkout.
// Each ends Applied False at the spec's row for its step, naming the file; nothing is written to
// the cluster and no byte of the file reaches the status.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Release } from '../../domain/api/objects.ts';
import { DEFAULT_TENANCY, type TenancySettings } from '../../domain/tenancy/settings.ts';
import type { FixtureFiles } from '../harness/git-fixtures.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';
import { convoyApi } from '../harness/releases.ts';

const applied = (release: Release) => release.status?.conditions?.find((c) => c.type === 'Applied');
const CHART = 'apiVersion: v2\nname: innocent\nversion: 0.1.0\n';
/** The template of the report: the linked file, base64, into a ConfigMap the tenant can read. */
const EXFILTRATE = (name: string, file: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata:\n  loot: {{ .Files.Get "${file}" | b64enc | quote }}\n`;

describe('tenancy: a Release cannot make convoy read a file outside its checkout', () => {
  let env: ReconcileEnv;
  let admin: KubeConfig;
  let tenant: KubeConfig;
  let ns: string;
  let adminKubeconfigPath: string;
  /** What must never leave the machine: the admin kubeconfig, its client key, an outside file. */
  let secrets: string[];
  let outside: string;
  const SENTINEL = `outside-sentinel-${Math.random().toString(36).slice(2)}`;
  // The env's egress policy (its own Git server allowed): the doors here are files, not addresses.
  const lockedDown = (): TenancySettings => ({
    ...DEFAULT_TENANCY,
    defaultServiceAccount: 'default',
    egress: env.tenancy.egress,
  });

  beforeAll(async () => {
    adminKubeconfigPath = inject('kubeconfigPath');
    admin = kubeConfigFor(adminKubeconfigPath);
    tenant = kubeConfigFor(adminKubeconfigPath, 'alice');
    env = await startReconcileEnv(admin, 'tenancy-render');
    ns = env.ns.name;
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'deployer' } } });
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    const grant = async (name: string, subject: object, rules: object[]) => {
      await rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name }, rules } as never });
      await rbac.createNamespacedRoleBinding({
        namespace: ns,
        body: {
          metadata: { name },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
          subjects: [subject as never],
        },
      });
    };
    // The tenant: convoy's objects in its namespace, nothing else.
    await grant('tenant', { kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }, [
      {
        apiGroups: ['convoy.dev'],
        resources: ['releases', 'gitrepositories'],
        verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
      },
    ]);
    // The Release's identity may write ConfigMaps here: were the render to leak, it would land.
    await grant('deployer', { kind: 'ServiceAccount', name: 'deployer', namespace: ns }, [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      },
    ]);

    outside = await mkdtemp(join(tmpdir(), 'convoy-outside-'));
    await writeFile(
      join(outside, 'leak.yaml'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked-template}\ndata: {k: ${SENTINEL}}\n`,
    );
    await mkdir(join(outside, 'base'));
    await writeFile(join(outside, 'base', 'kustomization.yaml'), 'resources: [cm.yaml]\n');
    await writeFile(
      join(outside, 'base', 'cm.yaml'),
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked-base}\ndata: {k: ${SENTINEL}}\n`,
    );
    const kubeconfig = await readFile(adminKubeconfigPath, 'utf8');
    const clientKey = /client-key-data:\s*(\S+)/.exec(kubeconfig)?.[1];
    expect(clientKey, 'the admin kubeconfig holds a client key').toBeDefined();
    secrets = [
      SENTINEL,
      clientKey!,
      Buffer.from(kubeconfig).toString('base64').slice(0, 64),
      Buffer.from(clientKey!).toString('base64').slice(0, 64),
    ];
  });
  afterAll(async () => {
    await env?.close();
    if (outside) await rm(outside, { recursive: true, force: true });
  });

  /** The tenant pushes `files` and creates the Release with its own token; one reconcile runs. */
  async function attack(name: string, files: FixtureFiles, spec: Record<string, unknown>) {
    const repo = await env.repo(name, files);
    await convoyApi(tenant).create('Release', ns, name, {
      cluster: { name: 'local' },
      targetNamespace: ns,
      serviceAccountName: 'deployer',
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      ...spec,
    });
    return env.reconcile(name, env.ports({ wiring: { tenancy: lockedDown() } }));
  }

  async function configMapExists(name: string): Promise<boolean> {
    try {
      await admin.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name, namespace: ns });
      return true;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return false;
      throw error;
    }
  }

  /** No byte of an outside file in status; nor a link's target (a Kustomize entry is quoted as the tenant wrote it). */
  function expectNoLeak(release: Release, { quotesEntry = false } = {}) {
    const status = JSON.stringify(release.status);
    for (const secret of secrets) expect(status).not.toContain(secret);
    if (!quotesEntry) expect(status).not.toContain(outside);
    expect(status).not.toContain(adminKubeconfigPath);
  }

  /** Applied False/DeployFailed at failure.stage Rendering, the message starting with `named`. */
  function expectRenderRefused(
    release: Release,
    named: string,
    why: RegExp,
    options: { quotesEntry?: boolean } = {},
  ) {
    const cond = applied(release);
    expect(cond, JSON.stringify(release.status)).toMatchObject({ status: 'False', reason: 'DeployFailed' });
    expect(cond!.message.startsWith(named), cond!.message).toBe(true);
    expect(cond!.message).toMatch(why);
    expect(release.status?.lastAttempted?.failure).toMatchObject({
      stage: 'Rendering',
      reason: 'DeployFailed',
    });
    expectNoLeak(release, options);
  }

  it('the report: kubeconfig.txt -> the admin kubeconfig, read by .Files.Get | b64enc → Applied False naming kubeconfig.txt, no ConfigMap, no key in status', async () => {
    const result = await attack(
      'files-get',
      {
        'Chart.yaml': CHART,
        'templates/cm.yaml': EXFILTRATE('loot-files-get', 'kubeconfig.txt'),
        'kubeconfig.txt': { symlink: adminKubeconfigPath },
      },
      { content: { type: 'Helm' } },
    );
    expectRenderRefused(result.release, 'kubeconfig.txt: ', /symbolic link to an absolute path/);
    expect(await configMapExists('loot-files-get')).toBe(false);
  });

  it('the same through a relative link that climbs out of the checkout, from a chart in a subfolder', async () => {
    const result = await attack(
      'relative-escape',
      {
        'deploy/app/Chart.yaml': CHART,
        'deploy/app/templates/cm.yaml': EXFILTRATE('loot-relative', 'files/kubeconfig.txt'),
        'deploy/app/files/kubeconfig.txt': { symlink: `${'../'.repeat(40)}${adminKubeconfigPath.slice(1)}` },
      },
      {
        source: {
          git: { url: `${env.git.url}/relative-escape.git`, ref: { branch: 'main' }, path: 'deploy/app' },
        },
        content: { type: 'Helm' },
      },
    );
    expectRenderRefused(
      result.release,
      'deploy/app/files/kubeconfig.txt: ',
      /leads outside the repository checkout/,
    );
    expect(await configMapExists('loot-relative')).toBe(false);
  });

  it('a template that is itself a symbolic link to a file outside → Applied False naming the template', async () => {
    const result = await attack(
      'linked-template',
      { 'Chart.yaml': CHART, 'templates/cm.yaml': { symlink: join(outside, 'leak.yaml') } },
      { content: { type: 'Helm' } },
    );
    expectRenderRefused(result.release, 'templates/cm.yaml: ', /symbolic link to an absolute path/);
    expect(await configMapExists('leaked-template')).toBe(false);
  });

  it('a values layer from a GitRepository that is a link to the admin kubeconfig → ValuesNotReady naming the file', async () => {
    const values = await env.repo('values-repo', { 'values.yaml': { symlink: adminKubeconfigPath } });
    await convoyApi(tenant).create('GitRepository', ns, 'values', {
      url: values.url,
      ref: { branch: 'main' },
    });
    const result = await attack(
      'values-link',
      {
        'Chart.yaml': CHART,
        'templates/cm.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: loot-values}\ndata: {v: {{ .Values | toJson | b64enc | quote }}}\n',
      },
      {
        content: {
          type: 'Helm',
          helm: { valuesFrom: [{ kind: 'GitRepository', name: 'values', path: 'values.yaml' }] },
        },
      },
    );
    const cond = applied(result.release);
    expect(cond).toMatchObject({ status: 'False', reason: 'ValuesNotReady' });
    expect(cond!.message).toContain('values.yaml: is or passes through a symbolic link to an absolute path');
    expect(result.release.status?.lastAttempted?.failure).toMatchObject({
      stage: 'Rendering',
      reason: 'ValuesNotReady',
    });
    expectNoLeak(result.release);
    expect(await configMapExists('loot-values')).toBe(false);
  });

  it('a Kustomize base outside the checkout (kustomize itself would load it) → Applied False naming the kustomization', async () => {
    const result = await attack(
      'kustomize-base',
      { 'kustomization.yaml': `resources: [${'../'.repeat(40)}${join(outside, 'base').slice(1)}]\n` },
      { content: { type: 'Kustomize' } },
    );
    expectRenderRefused(
      result.release,
      'kustomization.yaml (resources: "../',
      /leads outside the repository checkout/,
      { quotesEntry: true },
    );
    expect(await configMapExists('leaked-base')).toBe(false);
  });

  it('control: the same chart with the file committed (no link) renders and lands, as the Release identity', async () => {
    const result = await attack(
      'control',
      {
        'Chart.yaml': CHART,
        'templates/cm.yaml': EXFILTRATE('loot-control', 'kubeconfig.txt'),
        'kubeconfig.txt': 'not a secret\n',
      },
      { content: { type: 'Helm' } },
    );
    expect(applied(result.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    const cm = await admin
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'loot-control', namespace: ns });
    expect(cm.data?.loot).toBe(Buffer.from('not a secret\n').toString('base64'));
  });
});
