/**
 * The relay's fleet messages on the real apiserver, the relay running with the token of
 * the ServiceAccount the install manifests generate (infra/relay-manifests.ts: list/watch on
 * releasesets and clusters), sending over the wire to fauxqs with the real AWS SDK.
 *
 * A message that must NOT come is proven by order, not by waiting a while: after the change under
 * test, a "marker" ReleaseSet in another namespace is annotated, and its message is awaited. The
 * fleet rule (1-s window, 1-s spacing) makes any message the earlier change asked for due no later
 * than the marker's, so once the marker's message is on the queue (and one more receive is
 * drained), a message for the set under test would be there too.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { FLEET_COALESCE_RULE } from '../../domain/relay/coalesce.ts';
import { LOOPS, type Loop, type QueueMessage } from '../../domain/runtime/queue-message.ts';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { createLogger } from '../../platform/logger.ts';
import { relayManifests, RELAY_SERVICE_ACCOUNT, type KubeManifest } from '../../infra/relay-manifests.ts';
import { startRelay, type Relay } from '../../relay/relay.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';
import { drainQueueMessages } from '../harness/queue-drain.ts';

let admin: KubeConfig;
let objects: CustomObjectsApi;
let installation: FreshNamespace;
let tenantNs: FreshNamespace;
let markerNs: FreshNamespace;
let fauxqs: FauxqsServer;
let sqs: SQSClient;
let queueUrls: Record<Loop, string>;
let fleetQueueUrl: string;
let relay: Relay | undefined;
const clusterScoped: KubeManifest[] = [];
const uids = new Map<string, string>();
const relayLog: string[] = [];

const CHILDREN = 50;
const git = { url: 'https://git.example.invalid/apps.git', ref: { branch: 'main' } };
const setSpec = (maxConcurrent = 1) => ({
  clusters: { selector: { matchLabels: { tier: 'prod' } } },
  template: { spec: { source: { git } } },
  rollout: { maxConcurrent },
});

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(100);
  }
}

/** Every fleet message received so far, in order. */
const inbox: QueueMessage[] = [];
const pull = () => drainQueueMessages(sqs, fleetQueueUrl, inbox);
const messagesFor = (namespace: string, name: string, from = 0) =>
  inbox.slice(from).filter((m) => m.namespace === namespace && m.name === name);

let markerCount = 0;
/** Annotates the marker set and waits for its message: everything asked for before it has been sent by then. */
async function settle(): Promise<void> {
  markerCount += 1;
  const before = messagesFor(markerNs.name, 'marker').length;
  await patchSet(markerNs.name, 'marker', {
    metadata: { annotations: { 'convoy.dev/approve': `step@${markerCount}` } },
  });
  await until('the marker set message arrives', async () => {
    await pull();
    return messagesFor(markerNs.name, 'marker').length > before;
  });
  await pull();
}

/** After a Cluster change: each set of the tenant namespace (web, api) gets exactly one message since `from`, with `cause`. */
async function expectEachSetOnce(from: number, cause: string): Promise<void> {
  await until('both sets of the namespace are sent', async () => {
    await pull();
    return (
      messagesFor(tenantNs.name, 'web', from).length > 0 && messagesFor(tenantNs.name, 'api', from).length > 0
    );
  });
  await settle();
  for (const name of ['web', 'api']) {
    const mine = messagesFor(tenantNs.name, name, from);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.cause).toBe(cause);
  }
}

const setPath = (namespace: string) => ({
  group: API_GROUP,
  version: API_VERSION,
  namespace,
  plural: 'releasesets',
});
async function createSet(namespace: string, name: string): Promise<void> {
  const created = (await objects.createNamespacedCustomObject({
    ...setPath(namespace),
    body: {
      apiVersion: `${API_GROUP}/${API_VERSION}`,
      kind: 'ReleaseSet',
      metadata: { name, namespace },
      spec: setSpec(),
    },
  })) as { metadata: { uid: string } };
  uids.set(`${namespace}/${name}`, created.metadata.uid);
}
async function patchSet(namespace: string, name: string, patch: unknown): Promise<void> {
  await objects.patchNamespacedCustomObject(
    { ...setPath(namespace), name, body: patch },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}
async function patchStatus(plural: string, namespace: string, name: string, status: unknown): Promise<void> {
  await objects.patchNamespacedCustomObjectStatus(
    { group: API_GROUP, version: API_VERSION, namespace, plural, name, body: { status } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

const condition = (type: string, status: string, reason: string, message = '') => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-01-01T00:00:00Z',
  observedGeneration: 1,
});

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

beforeAll(async () => {
  admin = kubeConfigFor(inject('kubeconfigPath'));
  objects = admin.makeApiClient(CustomObjectsApi);
  installation = await freshNamespace(admin, 'convoy-install');
  tenantNs = await freshNamespace(admin, 'fleet-tenant');
  markerNs = await freshNamespace(admin, 'fleet-marker');
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
  const relayKc = new KubeConfig();
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

  const convoy = convoyApi(admin);
  await convoy.create('Cluster', tenantNs.name, 'prod-eu', { inCluster: true }, { labels: { tier: 'prod' } });
  await createSet(markerNs.name, 'marker');
  relay = startRelay({
    kube: fromClientNodeKubeConfig(relayKc),
    sqs,
    queueUrls,
    fleetQueueUrl,
    installationNamespace: installation.name,
    logger: createLogger({ write: (line) => relayLog.push(line), base: { test: 'relay-fleet' } }),
    identity: `fleet-relay-${randomBytes(3).toString('hex')}`,
    leaderElection: { leaseDurationMs: 3_000, renewIntervalMs: 500 },
    timers: false,
    // The shipped default: the relay may not list Secrets.
    watchSecrets: false,
  });
  await until(
    'the relay leads and every informer (ReleaseSets too) has synced',
    () => relay!.leading() && relay!.ready(),
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}; relay log:\n${relayLog.slice(-20).join('\n')}`);
  });
  // The marker was listed at the start: its first message.
  await until('the marker set is sent once listed', async () => {
    await pull();
    return messagesFor(markerNs.name, 'marker').length > 0;
  });
}, 120_000);

afterAll(async () => {
  await relay?.stop();
  const api = KubernetesObjectApi.makeApiClient(admin);
  for (const manifest of clusterScoped) await api.delete(manifest as KubernetesObject).catch(() => undefined);
  await fauxqs?.stop();
  sqs?.destroy();
  await tenantNs?.delete();
  await markerNs?.delete();
  await installation?.delete();
});

describe('the relay sends ReleaseSets their fleet messages (its own ServiceAccount, shipped RBAC)', () => {
  it('a ReleaseSet created gets one message naming it by uid; its generation bump one; an approve annotation one', async () => {
    let from = inbox.length;
    await createSet(tenantNs.name, 'web');
    await settle();
    let mine = messagesFor(tenantNs.name, 'web', from);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      v: 1,
      loop: 'fleet',
      namespace: tenantNs.name,
      name: 'web',
      uid: uids.get(`${tenantNs.name}/web`),
      cause: 'watch: ReleaseSet added',
    });

    from = inbox.length;
    await patchSet(tenantNs.name, 'web', { spec: { rollout: { maxConcurrent: 2 } } });
    await settle();
    mine = messagesFor(tenantNs.name, 'web', from);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.cause).toBe('watch: spec changed (generation 1 → 2)');

    from = inbox.length;
    await patchSet(tenantNs.name, 'web', {
      metadata: { annotations: { 'convoy.dev/approve': 'canary@r1' } },
    });
    await settle();
    mine = messagesFor(tenantNs.name, 'web', from);
    expect(mine).toHaveLength(1);
    expect(mine[0]?.cause).toBe('watch: annotation convoy.dev/approve changed');
  });

  it('a status-only change of the set sends nothing, and shows in the per-set gauges', async () => {
    const from = inbox.length;
    await patchStatus('releasesets', tenantNs.name, 'web', {
      observedGeneration: 2,
      rollout: { state: 'Progressing', step: 0, stepName: 'canary' },
      clusters: { selected: 1, updated: 0, ready: 0, waiting: 1, failed: 0 },
    });
    await until('the relay sees the status', async () =>
      (await relay!.metrics.render()).includes(
        `convoy_releaseset_rollout_state{namespace="${tenantNs.name}",set="web",state="Progressing"} 1`,
      ),
    );
    await settle();
    expect(messagesFor(tenantNs.name, 'web', from)).toEqual([]);
    const text = await relay!.metrics.render();
    expect(text).toContain(
      `convoy_releaseset_clusters{namespace="${tenantNs.name}",set="web",state="selected"} 1`,
    );
    expect(text).toContain(
      `convoy_releaseset_clusters{namespace="${tenantNs.name}",set="web",state="waiting"} 1`,
    );
    expect(text).toContain(`convoy_releaseset_observed{namespace="${tenantNs.name}",set="web"} 1`);
  });

  it('a Cluster relabelled sends every set of its namespace a message, and no set of another namespace', async () => {
    await createSet(tenantNs.name, 'api');
    await settle();
    const from = inbox.length;
    const markerBefore = messagesFor(markerNs.name, 'marker').length;
    await convoyApi(admin).patchMerge('Cluster', tenantNs.name, 'prod-eu', {
      metadata: { labels: { tier: 'staging' } },
    });
    await expectEachSetOnce(from, 'watch: Cluster prod-eu relabelled');
    // The marker (another namespace) got only its settle message.
    expect(messagesFor(markerNs.name, 'marker').length).toBe(markerBefore + 1);
  });

  it('a Cluster reannotated sends every set of its namespace one message and no set of another namespace; its last-applied-configuration or status alone nothing', async () => {
    const convoy = convoyApi(admin);
    // Cluster events come on the Cluster watch, not the ReleaseSet watch of the marker: wait until the relay saw them.
    const seen = () => relay!.metrics.eventsSeen.get({ kind: 'Cluster' });
    let from = inbox.length;
    const markerBefore = messagesFor(markerNs.name, 'marker').length;
    await convoy.patchMerge('Cluster', tenantNs.name, 'prod-eu', {
      metadata: { annotations: { 'example.com/region': 'eu-central-1' } },
    });
    await expectEachSetOnce(from, 'watch: Cluster prod-eu reannotated');
    expect(messagesFor(markerNs.name, 'marker').length).toBe(markerBefore + 1);

    // kubectl apply's copy of the object, then a status write: seen by the relay, no message.
    from = inbox.length;
    for (const change of [
      () =>
        convoy.patchMerge('Cluster', tenantNs.name, 'prod-eu', {
          metadata: {
            annotations: {
              'kubectl.kubernetes.io/last-applied-configuration':
                '{"kind":"Cluster","spec":{"inCluster":true}}',
            },
          },
        }),
      () =>
        patchStatus('clusters', tenantNs.name, 'prod-eu', {
          conditions: [condition('Ready', 'True', 'Connected')],
        }),
    ]) {
      const seenBefore = seen();
      await change();
      await until('the relay saw the Cluster change', () => seen() > seenBefore);
    }
    await settle();
    expect(messagesFor(tenantNs.name, 'web', from)).toEqual([]);
    expect(messagesFor(tenantNs.name, 'api', from)).toEqual([]);
  });

  it(`${CHILDREN} child verdict changes in a burst become a few coalesced messages; a status change that keeps the verdict none`, async () => {
    const convoy = convoyApi(admin);
    const names = Array.from({ length: CHILDREN }, (_, i) => `web-c${i}`);
    // Child events come on the Release watch, not the ReleaseSet watch of the marker: wait until the relay saw them.
    const seen = () => relay!.metrics.eventsSeen.get({ kind: 'Release' });
    let seenBefore = seen();
    for (const name of names)
      await convoy.create('Release', tenantNs.name, name, releaseSpec({ cluster: { name: 'prod-eu' } }), {
        labels: { 'convoy.dev/release-set': 'web' },
      });
    await until('the relay saw every child', () => seen() >= seenBefore + CHILDREN);
    await settle();

    // The burst: every child's verdict goes from "Applied not reported" to "Applied retried" (SourceNotReady).
    const from = inbox.length;
    seenBefore = seen();
    const started = Date.now();
    await Promise.all(
      names.map((name) =>
        patchStatus('releases', tenantNs.name, name, {
          conditions: [condition('Applied', 'False', 'SourceNotReady')],
        }),
      ),
    );
    const burstMs = Date.now() - started;
    await until('the relay saw every status write', () => seen() >= seenBefore + CHILDREN);
    await settle();
    const burst = messagesFor(tenantNs.name, 'web', from);
    // At most one a second while the burst lasts and one after its last event (FLEET_COALESCE_RULE),
    // with a second of slack for the watch delivering the events later than the writes.
    const bound = Math.floor(burstMs / FLEET_COALESCE_RULE.minSpacingMs) + 3;
    console.log(
      `relay-fleet: ${CHILDREN} child verdict changes written in ${burstMs} ms -> ${burst.length} fleet message(s) (bound ${bound})`,
    );
    expect(burst.length).toBeGreaterThanOrEqual(1);
    expect(burst.length).toBeLessThanOrEqual(bound);
    expect(burst[0]?.cause).toMatch(
      /^watch: child Release web-c\d+ verdict wait\/Applied → wait\/Applied\/retrying( \(and \d+ more events\))?$/,
    );
    expect(messagesFor(tenantNs.name, 'api', from)).toEqual([]);

    // Same verdict (same condition, another message and time): nothing.
    const quiet = inbox.length;
    seenBefore = seen();
    await patchStatus('releases', tenantNs.name, 'web-c0', {
      conditions: [
        {
          ...condition('Applied', 'False', 'SourceNotReady', 'git: still unreachable'),
          lastTransitionTime: '2026-01-01T00:01:00Z',
        },
      ],
    });
    await until('the relay saw the child status', () => seen() > seenBefore);
    await settle();
    expect(messagesFor(tenantNs.name, 'web', quiet)).toEqual([]);
  });

  it('a deleted set gets no message', async () => {
    const from = inbox.length;
    await objects.deleteNamespacedCustomObject({ ...setPath(tenantNs.name), name: 'api' });
    await settle();
    expect(messagesFor(tenantNs.name, 'api', from)).toEqual([]);
  });
});
