// Tenancy on the real kube-apiserver: a namespace's Releases can do only what that namespace's
// ServiceAccount may do (impersonated), the installation's policy refuses inCluster targets and
// cross-namespace references, and every refusal ends at a row of the spec's table naming the
// object and the identity — never with Secret data in status.
import {
  AuthorizationV1Api,
  CoreV1Api,
  RbacAuthorizationV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Release } from '../../domain/api/objects.ts';
import { DEFAULT_TENANCY, type TenancySettings } from '../../domain/tenancy/settings.ts';
import { parseEksRoles } from '../../domain/tenancy/eks-roles.ts';
import { createEksTokens } from '../../adapters/aws/eks-token.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';
import { grant } from '../harness/functions-identity.ts';
import { convoyApi } from '../harness/releases.ts';

const configMap = (name: string, namespace?: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}${namespace ? `, namespace: ${namespace}` : ''}}\ndata: {k: v}\n`;
const applied = (release: Release) => release.status?.conditions?.find((c) => c.type === 'Applied');
const SECRET_VALUE = 'hunter2-do-not-leak-9f3a';

describe('tenancy: per-Release identity and the installation policy', () => {
  let env: ReconcileEnv;
  let admin: KubeConfig;
  let tenant: KubeConfig;
  let teamB: FreshNamespace;
  let teamA: string;
  const lockedDown = (over: Partial<TenancySettings> = {}): TenancySettings => ({
    ...DEFAULT_TENANCY,
    defaultServiceAccount: 'default',
    // The env's egress policy (its own Git server allowed): the doors here are identities, not addresses.
    egress: env.tenancy.egress,
    ...over,
  });

  beforeAll(async () => {
    admin = kubeConfigFor(inject('kubeconfigPath'));
    tenant = kubeConfigFor(inject('kubeconfigPath'), 'alice');
    env = await startReconcileEnv(admin, 'team-a');
    teamA = env.ns.name;
    teamB = await freshNamespace(admin, 'team-b');
    const core = admin.makeApiClient(CoreV1Api);
    for (const name of ['deployer', 'default']) {
      await core
        .createNamespacedServiceAccount({ namespace: teamA, body: { metadata: { name } } })
        .catch((e: { code?: number }) => {
          if (e.code !== 409) throw e;
        });
    }
    // The tenant (alice): Releases and Clusters in team-a, nothing else.
    await grant(admin, teamA, 'tenant', { kind: 'User', name: 'alice' }, [
      {
        apiGroups: ['convoy.dev'],
        resources: ['releases', 'clusters'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      },
    ]);
    // team-a's deployer: ConfigMaps in team-a only.
    await grant(admin, teamA, 'deployer', { kind: 'ServiceAccount', name: 'deployer' }, [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      },
    ]);
    await core.createNamespacedSecret({
      namespace: teamB.name,
      body: { metadata: { name: 'b-values' }, stringData: { 'values.yaml': `password: ${SECRET_VALUE}\n` } },
    });
    const fileKubeconfig = (user: string) =>
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: ${user}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`;
    await core.createNamespacedSecret({
      namespace: teamA,
      body: {
        metadata: { name: 'auth-provider-kubeconfig' },
        stringData: {
          value: fileKubeconfig(`{auth-provider: {name: oidc, config: {id-token: ${SECRET_VALUE}}}}`),
        },
      },
    });
    await core.createNamespacedSecret({
      namespace: teamA,
      body: {
        metadata: { name: 'token-file-kubeconfig' },
        stringData: {
          value: fileKubeconfig('{tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}'),
        },
      },
    });
    // Releases without serviceAccountName act as `default`, which may read these kubeconfigs (a Release reads what it names as its identity).
    await grant(admin, teamA, 'default-kubeconfigs', { kind: 'ServiceAccount', name: 'default' }, [
      {
        apiGroups: [''],
        resources: ['secrets'],
        resourceNames: ['auth-provider-kubeconfig', 'token-file-kubeconfig', 'bad-kubeconfig'],
        verbs: ['get'],
      },
    ]);
    await core.createNamespacedSecret({
      namespace: teamA,
      body: {
        metadata: { name: 'bad-kubeconfig' },
        stringData: {
          value: `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {exec: {command: /bin/sh, args: ["-c", "echo ${SECRET_VALUE}"]}}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n`,
        },
      },
    });
  });
  afterAll(async () => {
    await env?.close();
    await teamB?.delete();
  });

  /** The tenant creates the Release (and, when asked, its Cluster) with its own token. */
  async function tenantRelease(
    name: string,
    files: Record<string, string>,
    spec: Record<string, unknown> = {},
  ) {
    const repo = await env.repo(name, files);
    await convoyApi(tenant).create('Release', teamA, name, {
      cluster: { name: 'local' },
      targetNamespace: teamA,
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      ...spec,
    });
    return name;
  }

  async function exists(
    kind: 'ConfigMap' | 'ClusterRoleBinding',
    name: string,
    namespace?: string,
  ): Promise<boolean> {
    try {
      if (kind === 'ConfigMap')
        await admin.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name, namespace: namespace ?? teamA });
      else await admin.makeApiClient(RbacAuthorizationV1Api).readClusterRoleBinding({ name });
      return true;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return false;
      throw error;
    }
  }

  it('the escalation: a render holding a ClusterRoleBinding to cluster-admin ends Applied False/Unappliable, nothing applied, naming the binding and the identity', async () => {
    const crb = `escalate-${teamA}`;
    await convoyApi(tenant).create('Cluster', teamA, 'mgmt', { inCluster: true });
    const name = await tenantRelease(
      'escalate',
      {
        'cm.yaml': configMap('innocent'),
        'crb.yaml': `apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: ${crb}}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}]\n`,
      },
      { cluster: { name: 'mgmt' }, serviceAccountName: 'deployer' },
    );
    const result = await env.reconcile(name, env.ports({ wiring: { tenancy: lockedDown() } }));
    const cond = applied(result.release)!;
    expect(cond).toMatchObject({ status: 'False', reason: 'Unappliable' });
    expect(cond.message).toContain(`ClusterRoleBinding ${crb}`);
    expect(cond.message).toContain(`system:serviceaccount:${teamA}:deployer`);
    expect(result.release.status?.lastAttempted?.failure).toMatchObject({
      stage: 'Syncing',
      reason: 'Unappliable',
    });
    expect(result.outcome.kind).toBe('stop');
    expect(await exists('ClusterRoleBinding', crb)).toBe(false);
    expect(await exists('ConfigMap', 'innocent')).toBe(false);
    // The other half of the report: a ConfigMap planted in kube-system.
    const planted = await tenantRelease(
      'plant',
      { 'cm.yaml': configMap(`planted-${teamA}`, 'kube-system') },
      { cluster: { name: 'mgmt' }, serviceAccountName: 'deployer' },
    );
    const plantResult = await env.reconcile(planted, env.ports({ wiring: { tenancy: lockedDown() } }));
    expect(applied(plantResult.release)).toMatchObject({ status: 'False', reason: 'Unappliable' });
    expect(applied(plantResult.release)!.message).toContain(`ConfigMap kube-system/planted-${teamA}`);
    expect(await exists('ConfigMap', `planted-${teamA}`, 'kube-system')).toBe(false);
    // And the tenant still cannot do everything.
    const review = await tenant.makeApiClient(AuthorizationV1Api).createSelfSubjectAccessReview({
      body: { spec: { resourceAttributes: { verb: '*', group: '*', resource: '*' } } },
    });
    expect(review.status?.allowed).toBe(false);
  });

  it('a Release acts as its ServiceAccount: what that ServiceAccount may write lands (and drift and health see it as that identity)', async () => {
    const name = await tenantRelease(
      'allowed',
      { 'cm.yaml': configMap('allowed-cm') },
      { serviceAccountName: 'deployer' },
    );
    const result = await env.reconcile(name, env.ports({ wiring: { tenancy: lockedDown() } }));
    expect(applied(result.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await exists('ConfigMap', 'allowed-cm')).toBe(true);
    const managers = (
      await admin.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'allowed-cm', namespace: teamA })
    ).metadata?.managedFields?.map((m) => m.manager);
    expect(managers).toContain('convoy');
  });

  it('team-a cannot write into team-b, nor a cluster-scoped kind its ServiceAccount may not create', async () => {
    const cross = await tenantRelease(
      'into-b',
      { 'cm.yaml': configMap('in-b', teamB.name) },
      { serviceAccountName: 'deployer' },
    );
    const intoB = await env.reconcile(cross, env.ports({ wiring: { tenancy: lockedDown() } }));
    expect(applied(intoB.release)).toMatchObject({ status: 'False', reason: 'Unappliable' });
    expect(applied(intoB.release)!.message).toContain(`ConfigMap ${teamB.name}/in-b`);
    expect(applied(intoB.release)!.message).toContain(`system:serviceaccount:${teamA}:deployer`);
    expect(await exists('ConfigMap', 'in-b', teamB.name)).toBe(false);

    const scoped = await tenantRelease(
      'cluster-scoped',
      { 'ns.yaml': `apiVersion: v1\nkind: Namespace\nmetadata: {name: owned-by-${teamA}}\n` },
      { serviceAccountName: 'deployer' },
    );
    const ns = await env.reconcile(scoped, env.ports({ wiring: { tenancy: lockedDown() } }));
    expect(applied(ns.release)).toMatchObject({ status: 'False', reason: 'Unappliable' });
    expect(applied(ns.release)!.message).toContain(`Namespace owned-by-${teamA}`);
  });

  it('a Release without serviceAccountName acts as the installation default (defaultServiceAccount), which has no rights here', async () => {
    const name = await tenantRelease('defaulted', { 'cm.yaml': configMap('defaulted-cm') });
    const result = await env.reconcile(name, env.ports({ wiring: { tenancy: lockedDown() } }));
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'Unappliable' });
    expect(applied(result.release)!.message).toContain(`system:serviceaccount:${teamA}:default`);
    // Without a default (an install that sets none): convoy's own identity, as before.
    const before = await env.reconcile(name, env.ports());
    expect(applied(before.release)).toMatchObject({ status: 'True', reason: 'Applied' });
  });

  it('bad input: a serviceAccountName that does not exist → Unappliable naming the identity, nothing applied', async () => {
    const name = await tenantRelease(
      'no-such-sa',
      { 'cm.yaml': configMap('never') },
      { serviceAccountName: 'no-such-sa' },
    );
    const result = await env.reconcile(name, env.ports({ wiring: { tenancy: lockedDown() } }));
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'Unappliable' });
    expect(applied(result.release)!.message).toContain(`system:serviceaccount:${teamA}:no-such-sa`);
    expect(await exists('ConfigMap', 'never')).toBe(false);
  });

  it('policy inClusterNamespaces: an inCluster target outside the allowed namespaces → ClusterNotReady naming the policy', async () => {
    const name = await tenantRelease('in-cluster-refused', { 'cm.yaml': configMap('refused') });
    const result = await env.reconcile(
      name,
      env.ports({ wiring: { tenancy: lockedDown({ inClusterNamespaces: new Set(['convoy-system']) }) } }),
    );
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
    expect(applied(result.release)!.message).toContain('inClusterNamespaces');
    expect(result.outcome.kind).toBe('retry');
    expect(await exists('ConfigMap', 'refused')).toBe(false);
  });

  it('policy crossNamespaceRefs: a Cluster, GitRepository or values Secret in another namespace is refused by its step, naming the policy; no Secret data anywhere', async () => {
    const ports = env.ports({ wiring: { tenancy: lockedDown() } });
    const clusterRef = await tenantRelease(
      'cross-cluster',
      { 'cm.yaml': configMap('x1') },
      { cluster: { name: 'local', namespace: teamB.name } },
    );
    const c = await env.reconcile(clusterRef, ports);
    expect(applied(c.release)).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
    expect(applied(c.release)!.message).toContain('crossNamespaceRefs');

    const repoRef = 'cross-repo';
    await convoyApi(tenant).create('Release', teamA, repoRef, {
      cluster: { name: 'local' },
      source: { gitRepositoryRef: { name: 'shared', namespace: teamB.name } },
    });
    const r = await env.reconcile(repoRef, ports);
    expect(applied(r.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(applied(r.release)!.message).toContain('crossNamespaceRefs');

    const values = await tenantRelease(
      'cross-values',
      { 'Chart.yaml': 'apiVersion: v2\nname: x\nversion: 0.1.0\n' },
      {
        content: {
          type: 'Helm',
          helm: { valuesFrom: [{ kind: 'Secret', name: 'b-values', namespace: teamB.name }] },
        },
      },
    );
    const v = await env.reconcile(values, ports);
    expect(applied(v.release)).toMatchObject({ status: 'False', reason: 'ValuesNotReady' });
    expect(applied(v.release)!.message).toContain('crossNamespaceRefs');
    for (const release of [c.release, r.release, v.release])
      expect(JSON.stringify(release.status)).not.toContain(SECRET_VALUE);
  });

  it('bad input: a kubeconfig Secret with an exec plugin → ClusterNotReady naming the field, no Secret data in status', async () => {
    await convoyApi(tenant).create('Cluster', teamA, 'exec-cluster', {
      kubeConfig: { secretRef: { name: 'bad-kubeconfig' } },
    });
    const name = await tenantRelease(
      'exec-kubeconfig',
      { 'cm.yaml': configMap('x2') },
      { cluster: { name: 'exec-cluster' } },
    );
    const result = await env.reconcile(name, env.ports({ wiring: { tenancy: lockedDown() } }));
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
    expect(applied(result.release)!.message).toContain('users[].user.exec');
    expect(JSON.stringify(result.release.status)).not.toContain(SECRET_VALUE);
  });

  it('bad input: a kubeconfig Secret with an auth-provider, or one that names a file → ClusterNotReady naming the field, nothing applied, no Secret data', async () => {
    const cases = [
      { secret: 'auth-provider-kubeconfig', field: 'auth-provider' },
      { secret: 'token-file-kubeconfig', field: 'tokenFile' },
    ];
    for (const { secret, field } of cases) {
      await convoyApi(tenant).create('Cluster', teamA, secret, {
        kubeConfig: { secretRef: { name: secret } },
      });
      const name = await tenantRelease(
        `release-${secret}`,
        { 'cm.yaml': configMap(`cm-${secret}`) },
        { cluster: { name: secret } },
      );
      const result = await env.reconcile(name, env.ports({ wiring: { tenancy: lockedDown() } }));
      expect(applied(result.release), secret).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
      expect(applied(result.release)!.message).toContain(field);
      expect(JSON.stringify(result.release.status)).not.toContain(SECRET_VALUE);
      expect(await exists('ConfigMap', `cm-${secret}`)).toBe(false);
    }
  });

  it('bad input: an EKS Cluster whose endpoint does not answer, and one in an installation without AWS credentials → ClusterNotReady naming spec.eks, nothing applied', async () => {
    // The real EKS token minter and fetch, sent to a loopback port where nothing listens (no traffic leaves the machine).
    const eks = createEksTokens({
      credentials: () => Promise.resolve({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: SECRET_VALUE }),
      fetch: (url, init) => fetch(url.replace(/^https:\/\/[^/]+/, 'http://127.0.0.1:1'), init),
      timeoutMs: 2_000,
    });
    await convoyApi(tenant).create('Cluster', teamA, 'eks-gone', {
      eks: { name: 'no-such-cluster', region: 'eu-west-1' },
    });
    const unreachable = await tenantRelease(
      'eks-unreachable',
      { 'cm.yaml': configMap('cm-eks-1') },
      { cluster: { name: 'eks-gone' } },
    );
    // team-a may use the functions' own role here (policy eksRoles), so the token is minted and the endpoint tried.
    const down = await env.reconcile(
      unreachable,
      env.ports({
        wiring: { tenancy: lockedDown({ eksRoles: parseEksRoles(`${teamA}=self`) }), eks: eks.access },
      }),
    );
    expect(applied(down.release)).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
    expect(applied(down.release)!.message).toContain('no-such-cluster');
    expect(JSON.stringify(down.release.status)).not.toContain(SECRET_VALUE);

    const noCredentials = await tenantRelease(
      'eks-no-credentials',
      { 'cm.yaml': configMap('cm-eks-2') },
      { cluster: { name: 'eks-gone' } },
    );
    const refused = await env.reconcile(noCredentials, env.ports({ wiring: { tenancy: lockedDown() } }));
    expect(applied(refused.release)).toMatchObject({ status: 'False', reason: 'ClusterNotReady' });
    expect(applied(refused.release)!.message).toContain('spec.eks');
    for (const cm of ['cm-eks-1', 'cm-eks-2']) expect(await exists('ConfigMap', cm)).toBe(false);
  });
});
