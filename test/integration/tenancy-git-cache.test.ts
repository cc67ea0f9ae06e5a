// The Git cache door (a checkout made with one tenant's credentials served to another), played
// as the attacker on the real kube-apiserver and a real `git http-backend` behind basic auth. Tenant A (alice, namespace team-a) deploys from a private
// repository with its credentials Secret; tenant B (bob, namespace team-b) names the same URL at
// the same full commit SHA — with no secretRef, or with credentials the server refuses — through
// the same function container (the same checkout cache, warm with A's checkout). Checkouts and ref
// resolutions are keyed by the credentials presented (adapters/source/credentials-key.ts), so B's
// fetch misses and the Git server refuses it: SourceNotReady saying authentication is required,
// nothing of A's repository rendered for B. A reconciled again still hits the cache: no request to
// the Git server. The functions act with the shipped RBAC's identity; Secrets are read as each
// Release's own ServiceAccount.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import type { KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { createPortCaches, type PortCaches } from '../../adapters/reconcile/port-caches.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { parseTenancySettings, type TenancySettings } from '../../domain/tenancy/settings.ts';
import { startGitHttpServer, type GitHttpServer } from '../../dev/git-http-server.ts';
import { createLogger } from '../../platform/logger.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createReconcileRecordHandler } from '../../functions/reconcile/reconcile-record.ts';
import { createRepo } from '../harness/git-fixtures.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi } from '../harness/releases.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';
import { asFunctions, grant } from '../harness/functions-identity.ts';

const PASSWORD = 'team-a-git-pa55word-7d1e';
const GUESS = 'team-b-guess-0000';
const MARKER = 'team-a-private-plans-3c9f';
const applied = (release: Release) => release.status?.conditions?.find((c) => c.type === 'Applied');

describe('tenancy: a Git checkout made with credentials is served only to the same credentials', () => {
  let admin: KubeConfig;
  let env: ReconcileEnv;
  let teamA: string;
  let teamANs: FreshNamespace;
  let teamB: FreshNamespace;
  let installation: FreshNamespace;
  let functions: { config: KubeClientConfig; close: () => Promise<void> };
  let tenancy: TenancySettings;
  let privateRoot: string;
  let privateGit: GitHttpServer;
  let privateUrl: string;
  let commit: string;
  /** One function container: one set of ports (checkout cache, ref cache) for every run. */
  let caches: PortCaches;
  let container: ReconcilePorts;
  const logs: string[] = [];

  beforeAll(async () => {
    admin = kubeConfigFor(inject('kubeconfigPath'));
    // The env gives the render store and the ports; the tenants and the installation are this file's own.
    env = await startReconcileEnv(admin, 'gitcache');
    teamANs = await freshNamespace(admin, 'gitcache-team-a');
    teamA = teamANs.name;
    teamB = await freshNamespace(admin, 'gitcache-team-b');
    installation = await freshNamespace(admin, 'gitcache-convoy');
    functions = await asFunctions(admin, installation.name, [teamA, teamB.name]);
    // The env's egress allow list (its Git servers and the private one below, on 127.0.0.1).
    tenancy = {
      ...parseTenancySettings({ defaultServiceAccount: 'default', inClusterNamespaces: '*' }),
      egress: env.tenancy.egress,
    };
    for (const ns of [teamA, teamB.name]) await env.api.create('Cluster', ns, 'local', { inCluster: true });

    privateRoot = await mkdtemp(join(tmpdir(), 'convoy-private-git-'));
    ({ commit } = await createRepo(privateRoot, 'plans', {
      'deploy/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plans}\ndata: {plan: ${MARKER}}\n`,
    }));
    privateGit = await startGitHttpServer({
      projectRoot: privateRoot,
      auth: { username: 'team-a', password: PASSWORD },
    });
    env.allowEgress(new URL(privateGit.url).host); // on 127.0.0.1: the egress allow list opens exactly it
    privateUrl = `${privateGit.url}/plans.git`;

    const core = admin.makeApiClient(CoreV1Api);
    const tenants = [
      { ns: teamA, user: 'alice', secret: 'git-creds', password: PASSWORD },
      { ns: teamB.name, user: 'bob', secret: 'guess-creds', password: GUESS },
    ];
    for (const t of tenants) {
      await core.createNamespacedServiceAccount({
        namespace: t.ns,
        body: { metadata: { name: 'deployer' } },
      });
      await core.createNamespacedSecret({
        namespace: t.ns,
        body: { metadata: { name: t.secret }, stringData: { username: 'team-a', password: t.password } },
      });
      // Each deployer: ConfigMaps of its namespace, and its own credentials Secret only.
      await grant(admin, t.ns, 'deployer', { kind: 'ServiceAccount', name: 'deployer' }, [
        {
          apiGroups: [''],
          resources: ['configmaps'],
          verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
        },
        { apiGroups: [''], resources: ['secrets'], resourceNames: [t.secret], verbs: ['get'] },
      ]);
      await grant(admin, t.ns, 'tenant', { kind: 'User', name: t.user }, [
        {
          apiGroups: ['convoy.dev'],
          resources: ['releases'],
          verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'],
        },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
      ]);
    }
    caches = createPortCaches();
    container = env.ports({ wiring: { managementKubeConfig: functions.config, tenancy, caches } });
  }, 60_000);

  afterAll(async () => {
    await env?.close();
    await functions?.close();
    await teamANs?.delete();
    await teamB?.delete();
    await installation?.delete();
    await privateGit?.stop();
    if (privateRoot) await rm(privateRoot, { recursive: true, force: true });
  });

  /** The reconcile function's record handler as the functions' identity (shipped RBAC), in `ports`' container. */
  async function reconcile(namespace: string, name: string, ports = container) {
    const handler = createReconcileRecordHandler({
      releases: createReleaseSource(functions.config),
      statusWriter: createStatusWriter(functions.config),
      ports,
      notify: () => Promise.resolve(),
    });
    const current = await env.api.getRelease(namespace, name);
    const logger = createLogger({
      base: { test: 'tenancy-git-cache' },
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

  /** The tenant creates its Release with its own token. */
  async function release(
    user: 'alice' | 'bob',
    namespace: string,
    name: string,
    git: Record<string, unknown>,
  ) {
    await convoyApi(kubeConfigFor(inject('kubeconfigPath'), user)).create('Release', namespace, name, {
      cluster: { name: 'local' },
      targetNamespace: namespace,
      serviceAccountName: 'deployer',
      source: { git: { url: privateUrl, path: 'deploy', ...git } },
    });
  }

  /** The ConfigMaps of team-b as bob reads them. */
  async function teamBConfigMaps(): Promise<string> {
    const list = await kubeConfigFor(inject('kubeconfigPath'), 'bob')
      .makeApiClient(CoreV1Api)
      .listNamespacedConfigMap({ namespace: teamB.name });
    return JSON.stringify(list.items.map((cm) => ({ name: cm.metadata?.name, data: cm.data })));
  }

  /** A's repository nowhere in what B can see, no credentials in B's status or in any log line. */
  async function assertNothingOfA(release: Release) {
    expect(await teamBConfigMaps()).not.toContain(MARKER);
    expect(release.status?.lastAttempted?.renderRef).toBeUndefined();
    expect(release.status?.lastSuccessful).toBeUndefined();
    for (const text of [JSON.stringify(release.status), logs.join('\n')]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(GUESS);
      expect(text).not.toContain(MARKER);
    }
  }

  it("A's Release fetches the private repository at a full commit SHA with its credentials Secret and is Applied", async () => {
    await release('alice', teamA, 'a-plans', { ref: { commit }, secretRef: { name: 'git-creds' } });
    const mark = privateGit.requests.length;
    const result = await reconcile(teamA, 'a-plans');
    expect(applied(result.release)).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(privateGit.requests.slice(mark).some((r) => r.command === 'fetch' && r.status === 200)).toBe(true);
    const cm = await kubeConfigFor(inject('kubeconfigPath'), 'alice')
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ namespace: teamA, name: 'plans' });
    expect(cm.data).toEqual({ plan: MARKER });
  });

  it("B names the same URL at the same commit with no secretRef, in the same container → SourceNotReady: the Git server requires authentication; nothing of A's rendered for B", async () => {
    await release('bob', teamB.name, 'b-no-creds', { ref: { commit } });
    const mark = privateGit.requests.length;
    const result = await reconcile(teamB.name, 'b-no-creds');
    const cond = applied(result.release)!;
    expect(cond).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(cond.message).toContain('requires authentication');
    expect(cond.message).toContain('HTTP 401');
    expect(cond.message).toContain('presents no credentials');
    // No secret named: neither A's Secret nor any other.
    expect(cond.message).not.toContain('git-creds');
    expect(cond.message).not.toMatch(/Secret \S+\//);
    expect(result.outcome.kind).toBe('retry');
    // The server was asked, and it refused.
    expect(privateGit.requests.slice(mark).map((r) => r.status)).toEqual(expect.arrayContaining([401]));
    expect(privateGit.requests.slice(mark).every((r) => r.status === 401)).toBe(true);
    await assertNothingOfA(result.release);
  });

  it('B with credentials the server refuses (its own Secret, a guessed password) → the same SourceNotReady, nothing rendered', async () => {
    await release('bob', teamB.name, 'b-wrong-creds', {
      ref: { commit },
      secretRef: { name: 'guess-creds' },
    });
    const mark = privateGit.requests.length;
    const result = await reconcile(teamB.name, 'b-wrong-creds');
    const cond = applied(result.release)!;
    expect(cond).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(cond.message).toContain('requires authentication');
    expect(cond.message).toContain('did not accept the credentials presented');
    expect(cond.message).not.toContain('git-creds');
    expect(privateGit.requests.slice(mark).every((r) => r.status === 401)).toBe(true);
    await assertNothingOfA(result.release);
  });

  it('B in a new container adopting the warm cache directory → refused the same way', async () => {
    const fresh = env.ports({
      wiring: { managementKubeConfig: functions.config, tenancy, caches: createPortCaches() },
    });
    const mark = privateGit.requests.length;
    const result = await reconcile(teamB.name, 'b-no-creds', fresh);
    expect(applied(result.release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
    expect(applied(result.release)!.message).toContain('requires authentication');
    expect(privateGit.requests.slice(mark).length).toBeGreaterThan(0);
    await assertNothingOfA(result.release);
  });

  it('A reconciled again still hits the cache: no request to the Git server (commit ref); a branch ref costs its ls-refs only', async () => {
    const mark = privateGit.requests.length;
    const again = await reconcile(teamA, 'a-plans');
    expect(applied(again.release)).toMatchObject({ status: 'True' });
    expect(privateGit.requests.slice(mark)).toHaveLength(0);

    // A branch ref: resolved over the network as A, then the same checkout from the cache.
    await release('alice', teamA, 'a-branch', { ref: { branch: 'main' }, secretRef: { name: 'git-creds' } });
    const first = privateGit.requests.length;
    expect(applied((await reconcile(teamA, 'a-branch')).release)).toMatchObject({ status: 'True' });
    // The commit was checked out with these credentials already: the branch's first run fetches nothing.
    expect(privateGit.requests.slice(first).filter((r) => r.command === 'fetch')).toHaveLength(0);
    // Within the ref cache's window: nothing at all.
    const second = privateGit.requests.length;
    expect(applied((await reconcile(teamA, 'a-branch')).release)).toMatchObject({ status: 'True' });
    expect(privateGit.requests.slice(second)).toHaveLength(0);
    // After it (a push announced): the ref advertisement only, no pack.
    caches.refs.clear();
    const third = privateGit.requests.length;
    expect(applied((await reconcile(teamA, 'a-branch')).release)).toMatchObject({ status: 'True' });
    const afterWindow = privateGit.requests.slice(third);
    expect(afterWindow.filter((r) => r.command === 'fetch')).toHaveLength(0);
    expect(afterWindow.filter((r) => r.command === 'ls-refs' && r.status === 200)).toHaveLength(1);
  });
});
