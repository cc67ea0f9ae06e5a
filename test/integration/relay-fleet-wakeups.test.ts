/**
 * What else wakes a ReleaseSet, and what the relay cleans up after one, on the real
 * apiserver, the relay running with the token of the ServiceAccount the install manifests generate
 * (infra/relay-manifests.ts) and sending over the wire to fauxqs with the real AWS SDK:
 *
 * - the set's interval timer: its template's spec.syncPolicy.interval sends it `timer: interval`
 *   messages (domain/relay/set-timers.ts), so a set that Succeeded still picks up a new commit;
 * - the Git webhook: a signed push of the repository and branch its template follows sends it a
 *   fleet message, as it reconciles the Releases that follow it (relay/http/git-hooks.ts), listing
 *   the sets as the relay's own identity;
 * - its fleet Lease (convoy-fleet-<set uid>, as the fleet function's Lease port creates it):
 *   deleted when the relay sees the set deleted, and swept at the relay's start when its set is
 *   gone (deleted while no relay led) — with only the Lease verbs the relay's Role has.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { LOOPS, type Loop, type QueueMessage } from '../../domain/runtime/queue-message.ts';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { createLeasePort } from '../../adapters/kube/lease.ts';
import { createLogger } from '../../platform/logger.ts';
import { relayManifests, RELAY_SERVICE_ACCOUNT, type KubeManifest } from '../../infra/relay-manifests.ts';
import {
  createGitWebhookHandler,
  createKubeWebhookReleaseSource,
  type GitWebhookHandler,
} from '../../relay/http/git-hooks.ts';
import { startRelay, type Relay } from '../../relay/relay.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { drainQueueMessages } from '../harness/queue-drain.ts';

let admin: KubeConfig;
let relayKc: KubeConfig;
let objects: CustomObjectsApi;
let leasesApi: CoordinationV1Api;
let installation: FreshNamespace;
let tenantNs: FreshNamespace;
let fauxqs: FauxqsServer;
let sqs: SQSClient;
let queueUrls: Record<Loop, string>;
let fleetQueueUrl: string;
let relay: Relay | undefined;
let webhook: GitWebhookHandler;
const clusterScoped: KubeManifest[] = [];
const relayLog: string[] = [];

const SECRET = 'relay-fleet-wakeups-secret';
const SHA = '0123456789abcdef0123456789abcdef01234567';
const APPS = 'https://git.example.invalid/org/apps.git';
const OTHER = 'https://git.example.invalid/org/other.git';
/** A set that was deleted before the relay started: its Lease is an orphan. */
const GONE_UID = '00000000-0000-4000-8000-00000000dead';

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting until ${what}; relay log:\n${relayLog.slice(-15).join('\n')}`,
      );
    await sleep(100);
  }
}

const inbox: QueueMessage[] = [];
const pull = () => drainQueueMessages(sqs, fleetQueueUrl, inbox);
const messagesFor = (name: string, from = 0) =>
  inbox.slice(from).filter((m) => m.namespace === tenantNs.name && m.name === name);

const setPath = () => ({
  group: API_GROUP,
  version: API_VERSION,
  namespace: tenantNs.name,
  plural: 'releasesets',
});
/** Creates a set whose template follows `url`'s main branch; returns its uid. */
async function createSet(name: string, url: string, interval?: string): Promise<string> {
  const created = (await objects.createNamespacedCustomObject({
    ...setPath(),
    body: {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind: 'ReleaseSet',
      metadata: { name, namespace: tenantNs.name },
      spec: {
        clusters: { selector: { matchLabels: { tier: 'prod' } } },
        template: {
          spec: {
            source: { git: { url, ref: { branch: 'main' } } },
            ...(interval === undefined ? {} : { syncPolicy: { interval } }),
          },
        },
      },
    },
  })) as { metadata: { uid: string } };
  return created.metadata.uid;
}

/** A fleet Lease as the fleet function's Lease port takes it (adapters/kube/lease.ts), as admin. */
async function takeFleetLease(setUid: string): Promise<string> {
  const port = createLeasePort(fromClientNodeKubeConfig(admin), installation.name);
  const taken = await port.acquire('fleet', setUid, `fleet-test-${randomBytes(2).toString('hex')}`, 30);
  if (taken.kind !== 'acquired') throw new Error(`the fleet Lease of ${setUid} is busy`);
  return taken.lease.name;
}
const leaseExists = async (name: string) =>
  leasesApi.readNamespacedLease({ namespace: installation.name, name }).then(
    () => true,
    (error: unknown) => {
      if ((error as { code?: number }).code === 404) return false;
      throw error;
    },
  );

/** The install manifests' RBAC for the relay, with this run's names (cluster-scoped objects renamed per run). */
function relayRbac(namespace: string): KubeManifest[] {
  const suffix = `-${namespace}`;
  return relayManifests({
    queueUrls: { reconcile: 'https://q/r', drift: 'https://q/d', health: 'https://q/h' },
    region: 'us-east-1',
    namespace,
    crds: [],
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

let liveUid: string;
let liveLease: string;
let orphanLease: string;

beforeAll(async () => {
  admin = kubeConfigFor(inject('kubeconfigPath'));
  objects = admin.makeApiClient(CustomObjectsApi);
  leasesApi = admin.makeApiClient(CoordinationV1Api);
  installation = await freshNamespace(admin, 'convoy-install');
  tenantNs = await freshNamespace(admin, 'fleet-wake');
  const api = KubernetesObjectApi.makeApiClient(admin);
  for (const manifest of relayRbac(installation.name)) {
    await api.create(manifest);
    if (manifest.kind.startsWith('Cluster')) clusterScoped.push(manifest);
  }
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
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
  fleetQueueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `${installation.name}-fleet` })))
    .QueueUrl!;

  // Before the relay starts: a live set with a Lease, and the Lease of a set deleted while no relay led.
  liveUid = await createSet('live', OTHER);
  liveLease = await takeFleetLease(liveUid);
  orphanLease = await takeFleetLease(GONE_UID);

  relay = startRelay({
    kube: fromClientNodeKubeConfig(relayKc),
    sqs,
    queueUrls,
    fleetQueueUrl,
    installationNamespace: installation.name,
    logger: createLogger({ write: (line) => relayLog.push(line), base: { test: 'relay-fleet-wakeups' } }),
    identity: `fleet-wake-${randomBytes(3).toString('hex')}`,
    leaderElection: { leaseDurationMs: 3_000, renewIntervalMs: 500 },
    watchSecrets: false,
  });
  // The webhook as relay/main.ts wires it: sets listed as the relay's identity, sent through the relay.
  webhook = createGitWebhookHandler({
    secret: SECRET,
    releases: createKubeWebhookReleaseSource(fromClientNodeKubeConfig(relayKc), { releaseSets: true }),
    enqueue: (loop, key, cause) => relay!.enqueue(loop, key, cause),
    logger: createLogger({
      write: (line) => relayLog.push(line),
      base: { test: 'relay-fleet-wakeups', component: 'git-webhook' },
    }),
  });
  await until(
    'the relay leads and every informer (ReleaseSets too) has synced',
    () => relay!.leading() && relay!.ready(),
  );
}, 120_000);

afterAll(async () => {
  await relay?.stop();
  const api = KubernetesObjectApi.makeApiClient(admin);
  for (const manifest of clusterScoped) await api.delete(manifest as KubernetesObject).catch(() => undefined);
  await fauxqs?.stop();
  sqs?.destroy();
  await tenantNs?.delete();
  await installation?.delete();
});

describe('what else wakes a ReleaseSet, and its Lease after it is gone (the relay as its own ServiceAccount)', () => {
  it('at the start the relay sweeps the fleet Lease of a set that no longer exists and keeps the Lease of a live set', async () => {
    await until('the orphaned fleet Lease is swept', async () => !(await leaseExists(orphanLease)));
    expect(orphanLease).toBe(`convoy-fleet-${GONE_UID}`);
    expect(await leaseExists(liveLease)).toBe(true);
  });

  it('a set with a 2-s template interval gets `timer: interval` messages, an interval apart', async () => {
    const from = inbox.length;
    const uid = await createSet('ticking', APPS, '2s');
    await until('two timer messages for the set', async () => {
      await pull();
      return messagesFor('ticking', from).filter((m) => m.cause === 'timer: interval').length >= 2;
    });
    const mine = messagesFor('ticking', from);
    expect(mine[0]).toMatchObject({ loop: 'fleet', uid, cause: 'watch: ReleaseSet added' });
    const ticks = mine.filter((m) => m.cause === 'timer: interval');
    for (const tick of ticks)
      expect(tick).toMatchObject({ loop: 'fleet', namespace: tenantNs.name, name: 'ticking', uid });
    // Each message restarts the timer: the next tick comes about an interval (2 s) after the one before, not at every 1-s tick.
    const sent = mine.map((m) => Date.parse(m.sentAt));
    for (let i = 1; i < sent.length; i++) expect(sent[i] - sent[i - 1]).toBeGreaterThanOrEqual(1_500);
  });

  it('a signed push of the repository and branch a set template follows sends that set a fleet message; a set of another repository gets none', async () => {
    const uid = await createSet('follows-push', APPS);
    await until('the relay knows the set (its add message)', async () => {
      await pull();
      return messagesFor('follows-push').length > 0;
    });
    const from = inbox.length;
    const body = JSON.stringify({
      ref: 'refs/heads/main',
      before: '1'.repeat(40),
      after: SHA,
      repository: {
        full_name: 'org/apps',
        clone_url: APPS,
        html_url: 'https://git.example.invalid/org/apps',
      },
    });
    const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const response = await webhook(
      new Request('http://relay/v1/hooks/git', {
        method: 'POST',
        body,
        headers: { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': signature },
      }),
    );
    expect(response.status).toBe(202);
    const answer = (await response.json()) as { matched: string[]; matchedReleaseSets: string[] };
    // `ticking` follows apps.git's main too; `live` follows other.git.
    expect(answer).toEqual({
      matched: [],
      matchedReleaseSets: [`${tenantNs.name}/follows-push`, `${tenantNs.name}/ticking`],
    });
    await until('the push message for the set', async () => {
      await pull();
      return messagesFor('follows-push', from).some((m) => m.cause === 'git push refs/heads/main 0123456');
    });
    expect(messagesFor('follows-push', from).find((m) => m.cause.startsWith('git push'))).toMatchObject({
      loop: 'fleet',
      uid,
    });
    expect(messagesFor('live', from)).toEqual([]);

    // A wrong signature is refused and sends nothing, as for Releases.
    const refused = await webhook(
      new Request('http://relay/v1/hooks/git', {
        method: 'POST',
        body,
        headers: { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': `sha256=${'0'.repeat(64)}` },
      }),
    );
    expect(refused.status).toBe(401);
  });

  it('a deleted set has its fleet Lease deleted by the relay; the Leases of other sets stay', async () => {
    const uid = await createSet('short-lived', OTHER);
    const lease = await takeFleetLease(uid);
    expect(await leaseExists(lease)).toBe(true);
    await objects.deleteNamespacedCustomObject({ ...setPath(), name: 'short-lived' });
    await until('the deleted set’s fleet Lease is gone', async () => !(await leaseExists(lease)));
    expect(await leaseExists(liveLease)).toBe(true);
    expect(relayLog.join('\n')).not.toContain('removing the Lease of a deleted ReleaseSet failed');
  });
});
