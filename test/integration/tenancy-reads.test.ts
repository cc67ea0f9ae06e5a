// What a Release names is read as its identity, and EKS roles are a namespace policy, played as
// the attacker on the real kube-apiserver. The functions act with a ServiceAccount token bound to the ClusterRole the install manifests generate
// (functionsRbac), never admin; the tenant is 'alice' (her own token), whose namespace team-a has
// a ServiceAccount `deployer` that may touch ConfigMaps only. What a Release names on the
// management cluster — values layers, Git and Helm credentials, a Cluster's kubeconfig — is read
// as that ServiceAccount, so the Secret alice cannot read never reaches a render she can read; an
// EKS Cluster naming another namespace's role (or none) is refused by policy before any token is
// minted.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createObserverTargetResolver } from '../../adapters/kube/observer-target.ts';
import { createManagementReaders } from '../../adapters/kube/cluster-resolver.ts';
import { createEventRecorder } from '../../adapters/kube/events.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import { kubeClientConfig, type KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import type { EksAccess, EksClusterRef } from '../../adapters/kube/target-access.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import {
  DEFAULT_TENANCY,
  parseTenancySettings,
  type TenancySettings,
} from '../../domain/tenancy/settings.ts';
import { createLogger } from '../../platform/logger.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createReconcileRecordHandler } from '../../functions/reconcile/reconcile-record.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi } from '../harness/releases.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';
import { asFunctions, grant, serviceAccountConfig } from '../harness/functions-identity.ts';

const SECRET_VALUE = 'a-db-password-must-not-leak-51c7';
const CHART = {
  'Chart.yaml': 'apiVersion: v2\nname: leak\nversion: 0.1.0\n',
  'templates/cm.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}-out}\ndata:\n  password: {{ .Values.password | default "none" | quote }}\n  greeting: {{ .Values.greeting | default "none" | quote }}\n',
};
const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: v}\n`;
const applied = (release: Release) => release.status?.conditions?.find((c) => c.type === 'Applied');
const A_ROLE = 'arn:aws:iam::111122223333:role/team-a-deployer';
const B_ROLE = 'arn:aws:iam::111122223333:role/team-b-deployer';

describe('tenancy: what a Release names is read as its identity, and EKS roles are the namespace policy', () => {
  let admin: KubeConfig;
  let alice: KubeConfig;
  let env: ReconcileEnv;
  let installation: FreshNamespace;
  let outsider: FreshNamespace;
  let functions: { config: KubeClientConfig; close: () => Promise<void> };
  let teamA: string;
  let deployerToken: string;
  let deployer: string;
  const logs: string[] = [];
  const eksCalls: EksClusterRef[] = [];
  let tenancy: TenancySettings;

  beforeAll(async () => {
    admin = kubeConfigFor(inject('kubeconfigPath'));
    alice = kubeConfigFor(inject('kubeconfigPath'), 'alice');
    env = await startReconcileEnv(admin, 'reads-team-a');
    teamA = env.ns.name;
    deployer = `system:serviceaccount:${teamA}:deployer`;
    installation = await freshNamespace(admin, 'reads-convoy');
    // Not a tenant namespace of this installation: the functions may not impersonate its ServiceAccounts.
    outsider = await freshNamespace(admin, 'reads-outsider');
    functions = await asFunctions(admin, installation.name, [teamA]);
    tenancy = {
      ...parseTenancySettings({
        defaultServiceAccount: 'default',
        inClusterNamespaces: '*',
        eksRoles: `${teamA}=arn:aws:iam::111122223333:role/team-a-*;team-b-*=arn:aws:iam::111122223333:role/team-b-*;${installation.name}=self;${outsider.name}=${A_ROLE}`,
      }),
      // The env's egress allow list: its Git server on 127.0.0.1.
      egress: env.tenancy.egress,
    };
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: teamA, body: { metadata: { name: 'deployer' } } });
    deployerToken = (await serviceAccountConfig(admin, teamA, 'deployer')).token;
    // team-a's deployer: ConfigMaps only. alice: Releases, Clusters and GitRepositories, and she may read ConfigMaps — not Secrets.
    await grant(admin, teamA, 'deployer', { kind: 'ServiceAccount', name: 'deployer' }, [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
      },
    ]);
    await grant(admin, teamA, 'tenant', { kind: 'User', name: 'alice' }, [
      {
        apiGroups: ['convoy.dev'],
        resources: ['releases', 'clusters', 'gitrepositories'],
        verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
      },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
    ]);
    const secret = (name: string, stringData: Record<string, string>) =>
      core.createNamespacedSecret({ namespace: teamA, body: { metadata: { name }, stringData } });
    await secret('a-db', { 'values.yaml': `password: ${SECRET_VALUE}\n` });
    await secret('git-creds', { username: 'git', password: SECRET_VALUE });
    await secret('remote-kubeconfig', {
      value: `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: ${SECRET_VALUE}}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`,
    });
    await core.createNamespacedConfigMap({
      namespace: teamA,
      body: { metadata: { name: 'a-values' }, data: { 'values.yaml': 'greeting: hello\n' } },
    });
  }, 60_000);
  afterAll(async () => {
    await env?.close();
    await functions?.close();
    await installation?.delete();
    await outsider?.delete();
  });

  /** The EKS boundary only (EKS cannot run here): records each call; the token is the deployer's, on this apiserver. */
  const fakeEks: EksAccess = (eks) => {
    eksCalls.push(eks);
    return Promise.resolve(
      kubeClientConfig({ server: functions.config.server, ca: functions.config.ca, token: deployerToken }),
    );
  };

  /** The reconcile function's record handler as the functions' identity, its log lines and Events kept. */
  async function reconcileAsFunctions(name: string, over: Partial<ReconcilePorts> = {}, namespace = teamA) {
    const ports = {
      ...env.ports({ wiring: { managementKubeConfig: functions.config, tenancy, eks: fakeEks } }),
      ...over,
    };
    const handler = createReconcileRecordHandler({
      releases: createReleaseSource(functions.config),
      statusWriter: createStatusWriter(functions.config),
      ports,
      notify: () => Promise.resolve(),
      events: createEventRecorder(env.config, {
        controller: 'convoy.dev/reconcile',
        instance: 'tenancy-reads',
      }),
    });
    const current = await env.api.getRelease(namespace, name);
    const logger = createLogger({
      base: { test: 'tenancy-reads' },
      level: 'debug',
      write: (line) => logs.push(line),
    });
    const outcome = await handler(
      {
        v: 1,
        loop: 'reconcile',
        namespace,
        name,
        uid: current.metadata.uid ?? '',
        cause: 'test',
        sentAt: new Date().toISOString(),
      },
      { logger, receiveCount: 1, messageId: name, record: {} as never },
    );
    return { outcome, release: await env.api.getRelease(namespace, name) };
  }

  /** alice creates the Release with her own token. */
  async function aliceRelease(
    name: string,
    spec: Record<string, unknown>,
    files: Record<string, string | null> = CHART,
  ) {
    const repo = await env.repo(name, files);
    await convoyApi(alice).create('Release', teamA, name, {
      cluster: { name: 'local' },
      targetNamespace: teamA,
      serviceAccountName: 'deployer',
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      ...spec,
    });
  }

  async function aliceReads(name: string): Promise<Record<string, string> | 'absent'> {
    try {
      return (
        (await alice.makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace: teamA, name })).data ?? {}
      );
    } catch (error) {
      if ((error as { code?: number }).code === 404) return 'absent';
      throw error;
    }
  }

  /** The Secret's data in no status, Event or log line. */
  async function assertNoSecretAnywhere(release: Release) {
    expect(JSON.stringify(release.status)).not.toContain(SECRET_VALUE);
    const events = await admin.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: teamA });
    expect(JSON.stringify(events.items)).not.toContain(SECRET_VALUE);
    expect(logs.join('\n')).not.toContain(SECRET_VALUE);
  }

  it("the attack of item 4: a values Secret the Release's ServiceAccount may not read → ValuesNotReady naming the Secret and the identity; nothing rendered, its data nowhere", async () => {
    // alice herself cannot read the Secret.
    await expect(
      alice.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: teamA, name: 'a-db' }),
    ).rejects.toMatchObject({ code: 403 });
    await aliceRelease('pull-secret', {
      content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'Secret', name: 'a-db' }] } },
    });
    const result = await reconcileAsFunctions('pull-secret');
    const cond = applied(result.release)!;
    expect(cond).toMatchObject({ status: 'False', reason: 'ValuesNotReady' });
    expect(cond.message).toContain('spec.content.helm.valuesFrom[0]: Secret');
    expect(cond.message).toContain(`Secret ${teamA}/a-db cannot be read as ${deployer}`);
    expect(cond.message).toContain(`may not get secrets in namespace ${teamA}`);
    expect(result.outcome.kind).toBe('retry');
    expect(await aliceReads('pull-secret-out')).toBe('absent');
    await assertNoSecretAnywhere(result.release);
  });

  it('a values ConfigMap the ServiceAccount may read renders; a Secret it is granted (resourceNames) renders too — the reads are its own, not refused wholesale', async () => {
    await aliceRelease('cm-layer', {
      content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'a-values' }] } },
    });
    const ok = await reconcileAsFunctions('cm-layer');
    expect(applied(ok.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await aliceReads('cm-layer-out')).toMatchObject({ greeting: 'hello', password: 'none' });

    await grant(admin, teamA, 'deployer-a-db', { kind: 'ServiceAccount', name: 'deployer' }, [
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['a-db'], verbs: ['get'] },
    ]);
    await aliceRelease('granted-secret', {
      content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'Secret', name: 'a-db' }] } },
    });
    const granted = await reconcileAsFunctions('granted-secret');
    expect(applied(granted.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await aliceReads('granted-secret-out')).toMatchObject({ password: SECRET_VALUE });
  });

  it('Git credentials (spec.source.git.secretRef, a GitRepository secretRef, a GitRepository values layer) and Helm repository credentials the ServiceAccount may not read → SourceNotReady / ValuesNotReady naming the Secret and the identity', async () => {
    const repo = await env.repo('private', { 'cm.yaml': configMap('private-cm') });
    await convoyApi(alice).create('GitRepository', teamA, 'private', {
      url: repo.url,
      ref: { branch: 'main' },
      secretRef: { name: 'git-creds' },
    });
    const cases = [
      {
        name: 'git-secret',
        spec: {
          source: { git: { url: repo.url, ref: { branch: 'main' }, secretRef: { name: 'git-creds' } } },
        },
        reason: 'SourceNotReady',
        field: 'spec.source.git.secretRef',
      },
      {
        name: 'repo-secret',
        spec: { source: { gitRepositoryRef: { name: 'private' } } },
        reason: 'SourceNotReady',
        field: `GitRepository ${teamA}/private.secretRef`,
      },
      {
        name: 'helm-secret',
        spec: {
          source: {
            helm: {
              repository: 'http://127.0.0.1:1/charts',
              chart: 'leak',
              version: '0.1.0',
              secretRef: { name: 'git-creds' },
            },
          },
        },
        reason: 'SourceNotReady',
        field: 'spec.source.helm.secretRef',
      },
      {
        name: 'layer-secret',
        spec: {
          content: {
            type: 'Helm',
            helm: { valuesFrom: [{ kind: 'GitRepository', name: 'private', path: 'values.yaml' }] },
          },
        },
        reason: 'ValuesNotReady',
        field: `GitRepository ${teamA}/private`,
      },
    ];
    for (const c of cases) {
      await aliceRelease(c.name, c.spec);
      const result = await reconcileAsFunctions(c.name);
      const cond = applied(result.release)!;
      expect(cond, c.name).toMatchObject({ status: 'False', reason: c.reason });
      expect(cond.message, c.name).toContain(c.field);
      expect(cond.message, c.name).toContain(`Secret ${teamA}/git-creds cannot be read as ${deployer}`);
      await assertNoSecretAnywhere(result.release);
    }
  });

  it('a Cluster whose kubeconfig Secret the ServiceAccount may not read → ClusterNotReady naming the Secret and the identity, for the reconcile and for drift and health', async () => {
    await convoyApi(alice).create('Cluster', teamA, 'remote', {
      kubeConfig: { secretRef: { name: 'remote-kubeconfig' } },
    });
    await aliceRelease('remote', { cluster: { name: 'remote' } }, { 'cm.yaml': configMap('remote-cm') });
    const result = await reconcileAsFunctions('remote');
    const cond = applied(result.release)!;
    expect(cond).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
    expect(cond.message).toContain(
      `Cluster ${teamA}/remote: its kubeconfig Secret ${teamA}/remote-kubeconfig cannot be read as ${deployer}`,
    );
    await assertNoSecretAnywhere(result.release);
    const observers = createObserverTargetResolver({
      managementKubeConfig: functions.config,
      readers: createManagementReaders(functions.config),
      tenancy,
      cacheTtlMs: 0,
    });
    await expect(observers.resolve(result.release)).rejects.toThrow(
      `its kubeconfig Secret ${teamA}/remote-kubeconfig cannot be read as ${deployer}`,
    );
  });

  it("the attack of item 3: a team-a Cluster naming team-b's roleArn, or none (the functions' own role) → ClusterNotReady naming the policy; no token minted", async () => {
    await convoyApi(alice).create('Cluster', teamA, 'eks-b-role', {
      eks: { name: 'prod', region: 'eu-west-1', roleArn: B_ROLE },
    });
    await convoyApi(alice).create('Cluster', teamA, 'eks-own-role', {
      eks: { name: 'prod', region: 'eu-west-1' },
    });
    eksCalls.length = 0;
    for (const [release, cluster, role] of [
      ['eks-b', 'eks-b-role', `role ${B_ROLE}`],
      ['eks-own', 'eks-own-role', "convoy's own IAM role"],
    ] as const) {
      await aliceRelease(release, { cluster: { name: cluster } }, { 'cm.yaml': configMap(`${release}-cm`) });
      const result = await reconcileAsFunctions(release);
      const cond = applied(result.release)!;
      expect(cond, release).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
      expect(cond.message, release).toContain(
        `Cluster ${teamA}/${cluster} would reach its EKS cluster as ${role}`,
      );
      expect(cond.message, release).toContain(
        `policy eksRoles: ${teamA} may use arn:aws:iam::111122223333:role/team-a-*`,
      );
      expect(await aliceReads(`${release}-cm`)).toBe('absent');
      const observers = createObserverTargetResolver({
        managementKubeConfig: functions.config,
        readers: createManagementReaders(functions.config),
        tenancy,
        eks: fakeEks,
        cacheTtlMs: 0,
      });
      await expect(observers.resolve(result.release)).rejects.toThrow('policy eksRoles');
    }
    expect(eksCalls).toEqual([]);
    // An installation that names no role for anyone refuses team-a's own role too.
    await convoyApi(alice).create('Cluster', teamA, 'eks-a-role', {
      eks: { name: 'prod', region: 'eu-west-1', roleArn: A_ROLE },
    });
    await aliceRelease('eks-a', { cluster: { name: 'eks-a-role' } }, { 'cm.yaml': configMap('eks-a-cm') });
    const none = await reconcileAsFunctions(
      'eks-a',
      env.ports({
        wiring: {
          managementKubeConfig: functions.config,
          tenancy: { ...tenancy, eksRoles: DEFAULT_TENANCY.eksRoles },
          eks: fakeEks,
        },
      }),
    );
    expect(applied(none.release)).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
    expect(applied(none.release)!.message).toContain(`policy eksRoles: ${teamA} may use none`);
    expect(eksCalls).toEqual([]);
  });

  it('a team-a Cluster naming a role team-a may use reaches its cluster (the token minter called once, for that role)', async () => {
    eksCalls.length = 0;
    const result = await reconcileAsFunctions('eks-a');
    expect(applied(result.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(eksCalls).toEqual([{ name: 'prod', region: 'eu-west-1', roleArn: A_ROLE }]);
    expect(await aliceReads('eks-a-cm')).toEqual({ k: 'v' });
  });

  it('a namespace whose ServiceAccounts the installation does not let convoy impersonate: its reads and its inCluster target are refused, saying so', async () => {
    const ns = outsider.name;
    const outsiderSa = `system:serviceaccount:${ns}:default`;
    await admin.makeApiClient(CoreV1Api).createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'values' }, data: { 'values.yaml': 'greeting: hi\n' } },
    });
    await env.api.create('Cluster', ns, 'eks', {
      eks: { name: 'prod', region: 'eu-west-1', roleArn: A_ROLE },
    });
    await env.api.create('Cluster', ns, 'local', { inCluster: true });
    const chart = await env.repo('outsider-chart', CHART);
    const release = (cluster: string, content: Record<string, unknown> = {}) => ({
      cluster: { name: cluster },
      targetNamespace: teamA,
      source: { git: { url: chart.url, ref: { branch: 'main' } } },
      ...content,
    });
    await env.api.create(
      'Release',
      ns,
      'values',
      release('eks', {
        content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'values' }] } },
      }),
    );
    const values = await reconcileAsFunctions('values', {}, ns);
    expect(applied(values.release)).toMatchObject({ status: 'False', reason: 'ValuesNotReady' });
    expect(applied(values.release)!.message).toContain(
      `ConfigMap ${ns}/values cannot be read as ${outsiderSa}: this installation does not let convoy act as that identity (impersonation Forbidden)`,
    );

    await env.api.create('Release', ns, 'in-cluster', release('local'));
    const local = await reconcileAsFunctions('in-cluster', {}, ns);
    expect(applied(local.release)).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
    expect(applied(local.release)!.message).toContain(
      `this installation does not let convoy act as ${outsiderSa} (impersonation Forbidden)`,
    );
  });
});
