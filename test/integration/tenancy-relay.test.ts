/**
 * The relay with the token of the ServiceAccount that the install manifests generate
 * (infra/relay-manifests.ts) with watchSecrets on, not as admin: leader election, informers
 * (Secrets and ConfigMaps as metadata only), the sweep of deleted Releases' Leases and the HTTP API
 * all work, and reading a Secret with that token is Forbidden. (Without watchSecrets — the default —
 * the relay may not list Secrets at all: shipped-identities.test.ts.)
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from '@kubernetes/client-node';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  LOOPS,
  parseQueueMessage,
  type Loop,
  type QueueMessage,
} from '../../domain/runtime/queue-message.ts';
import { createLogger } from '../../platform/logger.ts';
import { relayManifests, RELAY_SERVICE_ACCOUNT, type KubeManifest } from '../../infra/relay-manifests.ts';
import { createApiApp } from '../../relay/http/app.ts';
import { createKubeAuthenticator } from '../../relay/http/auth.ts';
import { createReleaseApi } from '../../relay/http/release-api.ts';
import { startRelay, type Relay } from '../../relay/relay.ts';
import { metadataOnlyListWatch } from '../../relay/watch/metadata-only.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';

let admin: KubeConfig;
let relayKc: KubeConfig;
let installation: FreshNamespace;
let tenantNs: FreshNamespace;
let fauxqs: FauxqsServer;
let sqs: SQSClient;
let queueUrls: Record<Loop, string>;
let relay: Relay | undefined;
const clusterScoped: KubeManifest[] = [];
const ORPHAN_UID = `00000000-0000-4000-8000-${randomBytes(6).toString('hex')}`;
const SECRET_VALUE = 'relay-must-not-see-this-7c1d';

// A safety net, not a speed: the relay lists every namespace, so when a parallel file has just made
// 1,000 Releases (dashboard-browser) the queues hold thousands of their messages to drain first.
async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(100);
  }
}

const inbox: QueueMessage[] = [];
async function pull(): Promise<void> {
  for (const loop of LOOPS) {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrls[loop], MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
      );
      if (Messages.length === 0) break;
      for (const m of Messages) {
        const parsed = parseQueueMessage(m.Body ?? '');
        if (parsed.ok && parsed.message.namespace === tenantNs.name) inbox.push(parsed.message);
      }
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrls[loop],
          Entries: Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
  }
}
async function messageFor(name: string, cause: (c: string) => boolean): Promise<QueueMessage> {
  let found: QueueMessage | undefined;
  await until(`a message for ${name}`, async () => {
    await pull();
    found = inbox.find((m) => m.name === name && cause(m.cause));
    return found !== undefined;
  });
  return found!;
}

/** The install manifests' RBAC for the relay, with this run's names (cluster-scoped objects are shared by the test run). */
function relayRbac(namespace: string): KubeManifest[] {
  const suffix = `-${namespace}`;
  return relayManifests({
    queueUrls: { reconcile: 'https://q/r', drift: 'https://q/d', health: 'https://q/h' },
    region: 'us-east-1',
    namespace,
    crds: [],
    watchSecrets: true,
  })
    .filter((m) =>
      ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'].includes(m.kind),
    )
    .filter((m) => m.metadata['name'] === 'convoy-relay' || m.kind === 'ServiceAccount')
    .map((m) => {
      if (m.kind !== 'ClusterRole' && m.kind !== 'ClusterRoleBinding') return m;
      const renamed = {
        ...m,
        metadata: { ...m.metadata, name: `${String(m.metadata['name'])}${suffix}` },
      } as KubeManifest;
      if (m.kind === 'ClusterRoleBinding')
        (renamed as unknown as { roleRef: { name: string } }).roleRef = {
          ...(m as unknown as { roleRef: { name: string } }).roleRef,
          name: `convoy-relay${suffix}`,
        };
      return renamed;
    });
}

beforeAll(async () => {
  admin = kubeConfigFor(inject('kubeconfigPath'));
  installation = await freshNamespace(admin, 'convoy-install');
  tenantNs = await freshNamespace(admin, 'relay-tenant');
  const objects = KubernetesObjectApi.makeApiClient(admin);
  for (const manifest of relayRbac(installation.name)) {
    await objects.create(manifest);
    if (manifest.kind.startsWith('Cluster')) clusterScoped.push(manifest);
  }
  // A token of the relay's ServiceAccount (TokenRequest), and a kubeconfig with nothing else.
  const core = admin.makeApiClient(CoreV1Api);
  const token = await core.createNamespacedServiceAccountToken({
    namespace: installation.name,
    name: RELAY_SERVICE_ACCOUNT,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster()!;
  relayKc = new KubeConfig();
  relayKc.loadFromOptions({
    clusters: [{ name: 'mgmt', server: cluster.server, caData: cluster.caData }],
    users: [{ name: 'relay', token: token.status!.token }],
    contexts: [{ name: 'relay', cluster: 'mgmt', user: 'relay' }],
    currentContext: 'relay',
  });
  // A Lease of a Release deleted while no relay led.
  await admin.makeApiClient(CoordinationV1Api).createNamespacedLease({
    namespace: installation.name,
    body: {
      metadata: { name: `reconcile-${ORPHAN_UID}`, labels: { 'convoy.dev/release-uid': ORPHAN_UID } },
      spec: { holderIdentity: '' },
    },
  });
  await core.createNamespacedSecret({
    namespace: tenantNs.name,
    body: {
      metadata: { name: 'values', labels: { 'convoy.dev/watch': 'true' } },
      stringData: { 'values.yaml': `password: ${SECRET_VALUE}\n` },
    },
  });
  fauxqs = await startFauxqs({ port: 0, logger: false });
  sqs = new SQSClient({
    endpoint: `http://127.0.0.1:${fauxqs.port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 't', secretAccessKey: 't' },
  });
  queueUrls = {} as Record<Loop, string>;
  for (const loop of LOOPS)
    queueUrls[loop] = (
      await sqs.send(new CreateQueueCommand({ QueueName: `${installation.name}-${loop}` }))
    ).QueueUrl!;
});

afterAll(async () => {
  await relay?.stop();
  const objects = KubernetesObjectApi.makeApiClient(admin);
  for (const manifest of clusterScoped)
    await objects.delete(manifest as KubernetesObject).catch(() => undefined);
  await fauxqs?.stop();
  sqs?.destroy();
  await tenantNs?.delete();
  await installation?.delete();
});

describe('the relay under its generated RBAC (its ServiceAccount token, not admin)', () => {
  it('reading a Secret with the relay token is Forbidden; so is reading a ConfigMap one by one', async () => {
    const core = relayKc.makeApiClient(CoreV1Api);
    await expect(
      core.readNamespacedSecret({ namespace: tenantNs.name, name: 'values' }),
    ).rejects.toMatchObject({ code: 403 });
    await expect(
      core.readNamespacedConfigMap({ namespace: tenantNs.name, name: 'kube-root-ca.crt' }),
    ).rejects.toMatchObject({ code: 403 });
    // What the relay's informer lists: metadata, no data.
    const listed = await metadataOnlyListWatch(
      fromClientNodeKubeConfig(relayKc),
      '/api/v1/secrets',
      'convoy.dev/watch=true',
    ).list();
    const mine = listed.items.find(
      (item) => item.metadata?.namespace === tenantNs.name && item.metadata.name === 'values',
    );
    expect(mine?.metadata?.resourceVersion).toBeDefined();
    for (const item of listed.items) expect(item).not.toHaveProperty('data');
    expect(JSON.stringify(listed)).not.toContain(SECRET_VALUE);
  });

  it('leader election, informers (Secrets as metadata only) and the Lease sweep work', async () => {
    const lines: string[] = [];
    relay = startRelay({
      kube: fromClientNodeKubeConfig(relayKc),
      sqs,
      queueUrls,
      installationNamespace: installation.name,
      logger: createLogger({ write: (line) => lines.push(line), base: { test: 'tenancy-relay' } }),
      identity: 'rbac-relay',
      leaderElection: { leaseDurationMs: 3_000, renewIntervalMs: 500 },
      tickMs: 200,
    });
    await until('the relay leads and every informer has synced', () => relay!.leading() && relay!.ready());

    const name = `uses-secret-${randomBytes(3).toString('hex')}`;
    await convoyApi(admin).create(
      'Release',
      tenantNs.name,
      name,
      releaseSpec({
        content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'Secret', name: 'values' }] } },
      }),
    );
    await messageFor(name, (c) => c.startsWith('watch:'));
    // A change of the labelled Secret reaches the Release that reads it (seen as metadata).
    await admin.makeApiClient(CoreV1Api).patchNamespacedSecret(
      {
        namespace: tenantNs.name,
        name: 'values',
        body: { stringData: { 'values.yaml': 'password: rotated\n' } },
      },
      (await import('@kubernetes/client-node')).setHeaderOptions(
        'Content-Type',
        (await import('@kubernetes/client-node')).PatchStrategy.MergePatch,
      ),
    );
    await messageFor(name, (c) => c.includes('Secret values'));

    const leases = admin.makeApiClient(CoordinationV1Api);
    await until('the orphan Lease is swept', async () => {
      const list = await leases.listNamespacedLease({
        namespace: installation.name,
        labelSelector: `convoy.dev/release-uid=${ORPHAN_UID}`,
      });
      return list.items.length === 0;
    });
    expect(lines.join('\n')).not.toMatch(/forbidden/i);
    expect(lines.join('\n')).not.toContain(SECRET_VALUE);
  }, 300_000);

  it('the HTTP API works with the relay token (TokenReview + SubjectAccessReview as the caller)', async () => {
    const name = `api-${randomBytes(3).toString('hex')}`;
    await convoyApi(admin).create('Release', tenantNs.name, name, releaseSpec());
    const app = createApiApp({
      auth: createKubeAuthenticator(fromClientNodeKubeConfig(relayKc)),
      releases: createReleaseApi(fromClientNodeKubeConfig(relayKc)),
      metrics: relay!.metrics,
      ready: () => relay!.ready(),
    });
    // A caller with its own token: alice, who may get and update Releases in this namespace.
    const rbac = await import('@kubernetes/client-node');
    const api = admin.makeApiClient(rbac.RbacAuthorizationV1Api);
    await api.createNamespacedRole({
      namespace: tenantNs.name,
      body: {
        metadata: { name: 'release-user' },
        rules: [{ apiGroups: ['convoy.dev'], resources: ['releases'], verbs: ['get', 'list', 'update'] }],
      },
    });
    await api.createNamespacedRoleBinding({
      namespace: tenantNs.name,
      body: {
        metadata: { name: 'release-user' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'release-user' },
        subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
    const alice = inject('tokens')['alice'];
    const get = await app.request(`/v1/namespaces/${tenantNs.name}/releases/${name}`, {
      headers: { Authorization: `Bearer ${alice}` },
    });
    expect(get.status).toBe(200);
    const sync = await app.request(`/v1/namespaces/${tenantNs.name}/releases/${name}/sync`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${alice}` },
    });
    expect(sync.status).toBeLessThan(300);
    const bob = inject('tokens')['bob'];
    const denied = await app.request(`/v1/namespaces/${tenantNs.name}/releases/${name}`, {
      headers: { Authorization: `Bearer ${bob}` },
    });
    expect(denied.status).toBe(403);
    expect((await app.request('/readyz')).status).toBe(200);
  }, 300_000);
});
