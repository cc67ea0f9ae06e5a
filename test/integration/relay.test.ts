/**
 * The relay against a real kube-apiserver and fauxqs: watch events become
 * queue messages, status writes do not, other kinds reach the Releases
 * that read them, a restarted relay catches up by listing, bursts collapse,
 * and interval timers fire. Every wait is bounded; the relay sees every
 * namespace, so messages are filtered to this file's namespace.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import type { LeasePort } from '../../domain/runtime/lease.ts';
import {
  LOOPS,
  parseQueueMessage,
  type Loop,
  type QueueMessage,
} from '../../domain/runtime/queue-message.ts';
import { createLogger } from '../../platform/logger.ts';
import { startRelay, type Relay, type RelayOptions } from '../../relay/relay.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';

let kc: KubeConfig;
let api: ReturnType<typeof convoyApi>;
let ns: FreshNamespace;
let server: FauxqsServer;
let sqs: SQSClient;
let queueUrls: Record<Loop, string>;
let relay: Relay | undefined;
const removedLeases: string[] = [];
const ORPHAN_UID = '00000000-0000-4000-8000-00000000dead';
const logLines: string[] = [];
const inbox: Record<Loop, QueueMessage[]> = { reconcile: [], drift: [], health: [] };

const recordingLeases: Pick<LeasePort, 'removeAll' | 'releaseUids'> & Partial<LeasePort> = {
  acquire: () => Promise.reject(new Error('the relay never acquires Leases')),
  release: () => Promise.resolve(),
  removeAll: (uid) => {
    removedLeases.push(uid);
    return Promise.resolve();
  },
  // A Release deleted while no relay led left its Leases behind.
  releaseUids: () => Promise.resolve([ORPHAN_UID]),
};

function start(identity: string, overrides: Partial<RelayOptions> = {}): Relay {
  return startRelay({
    kube: fromClientNodeKubeConfig(kc),
    sqs,
    queueUrls,
    installationNamespace: ns.name,
    logger: createLogger({ write: (line) => logLines.push(line), base: { identity } }),
    leases: recordingLeases,
    identity,
    leaderElection: { leaseDurationMs: 3_000, renewIntervalMs: 500 },
    ...overrides,
  });
}

async function until(
  what: string,
  check: () => boolean,
  timeoutMs = 10_000,
  between?: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (await between?.(); !check(); await between?.()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(50);
  }
}

/** Moves every message now on the loop's queue into the inbox (this namespace only) and deletes it from the queue. */
async function pull(loop: Loop): Promise<void> {
  for (;;) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrls[loop], MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    if (Messages.length === 0) return;
    for (const m of Messages) {
      const parsed = parseQueueMessage(m.Body ?? '');
      if (!parsed.ok) throw new Error(`the relay sent an invalid message: ${parsed.error}`);
      if (parsed.message.namespace === ns.name) inbox[loop].push(parsed.message);
    }
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrls[loop],
        Entries: Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! })),
      }),
    );
  }
}

/**
 * The messages for Release `name` on `loop`: waits until at least `atLeast`
 * arrived (or timeoutMs passed), then `settleMs` more for extras.
 */
async function messagesFor(
  loop: Loop,
  name: string,
  {
    atLeast = 1,
    timeoutMs = 8_000,
    settleMs = 1_200,
  }: { atLeast?: number; timeoutMs?: number; settleMs?: number } = {},
): Promise<QueueMessage[]> {
  const deadline = Date.now() + timeoutMs;
  let settleUntil: number | undefined;
  for (;;) {
    await pull(loop);
    const count = inbox[loop].filter((m) => m.name === name).length;
    if (count >= atLeast) settleUntil ??= Date.now() + settleMs;
    if ((settleUntil !== undefined && Date.now() >= settleUntil) || Date.now() >= deadline) break;
    await sleep(100);
  }
  const matching = inbox[loop].filter((m) => m.name === name);
  inbox[loop] = inbox[loop].filter((m) => m.name !== name);
  return matching;
}

/** Empties the queues and the inbox. */
async function drain(): Promise<void> {
  for (const loop of LOOPS) {
    await pull(loop);
    inbox[loop] = [];
  }
}

const unique = (prefix: string) => `${prefix}-${randomBytes(3).toString('hex')}`;

async function patchReleaseStatus(name: string, status: Record<string, unknown>) {
  await api.raw.patchNamespacedCustomObjectStatus(
    {
      group: API_GROUP,
      version: API_VERSION,
      namespace: ns.name,
      plural: 'releases',
      name,
      body: { status },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

beforeAll(async () => {
  kc = kubeConfigFor(inject('kubeconfigPath'));
  api = convoyApi(kc);
  ns = await freshNamespace(kc, 'relay');
  server = await startFauxqs({ port: 0, logger: false });
  sqs = new SQSClient({
    endpoint: `http://127.0.0.1:${server.port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const suffix = randomBytes(3).toString('hex');
  const urls: Partial<Record<Loop, string>> = {};
  for (const loop of LOOPS) {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `relay-${suffix}-${loop}` }));
    urls[loop] = QueueUrl!;
  }
  queueUrls = urls as Record<Loop, string>;
  relay = start('relay-a');
  await until('the relay leads and has listed', () => relay!.ready() && relay!.leading());
});

afterAll(async () => {
  await relay?.stop();
  sqs?.destroy();
  await server?.stop();
  await ns?.delete();
  const errors = logLines.filter((l) => l.includes('"level":"error"'));
  if (errors.length > 0) console.error(`relay logged errors:\n${errors.join('\n')}`);
});

describe('relay', () => {
  it('creating a Release sends one reconcile message', async () => {
    const name = unique('created');
    const created = await api.create('Release', ns.name, name, releaseSpec());
    const messages = await messagesFor('reconcile', name);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      v: 1,
      loop: 'reconcile',
      namespace: ns.name,
      name,
      uid: (created['metadata'] as { uid: string }).uid,
      cause: 'watch: Release added',
    });
  });

  it('a spec change sends another; a status-only update sends nothing', async () => {
    const name = unique('changed');
    await api.create('Release', ns.name, name, releaseSpec());
    expect(await messagesFor('reconcile', name)).toHaveLength(1);

    await api.patchMerge('Release', ns.name, name, { spec: { clusterWave: 2 } });
    const changed = await messagesFor('reconcile', name);
    expect(changed).toHaveLength(1);
    expect(changed[0]?.cause).toContain('spec changed');

    const seen = relay!.metrics.eventsSeen.get({ kind: 'Release' });
    await patchReleaseStatus(name, {
      observedGeneration: 2,
      reconciledAt: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    });
    await until(
      'the relay saw the status update',
      () => relay!.metrics.eventsSeen.get({ kind: 'Release' }) > seen,
    );
    expect(await messagesFor('reconcile', name, { timeoutMs: 1_200 })).toEqual([]);
  });

  it('a Cluster change sends messages for the Releases that target it, and only for a spec change', async () => {
    const cluster = unique('east');
    const east = [unique('east-a'), unique('east-b')];
    const west = unique('west');
    for (const name of east)
      await api.create('Release', ns.name, name, releaseSpec({ cluster: { name: cluster } }));
    await api.create('Release', ns.name, west, releaseSpec({ cluster: { name: 'elsewhere' } }));
    for (const name of [...east, west])
      expect(await messagesFor('reconcile', name, { settleMs: 0 })).toHaveLength(1);

    await api.create('Cluster', ns.name, cluster, { kubeConfig: { secretRef: { name: 'kubeconfig-1' } } });
    for (const name of east)
      expect((await messagesFor('reconcile', name, { settleMs: 300 }))[0]?.cause).toBe(
        `watch: Cluster ${cluster} added`,
      );

    await api.patchMerge('Cluster', ns.name, cluster, {
      spec: { kubeConfig: { secretRef: { name: 'kubeconfig-2' } } },
    });
    for (const name of east)
      expect((await messagesFor('reconcile', name))[0]?.cause).toBe(`watch: Cluster ${cluster} modified`);
    expect(await messagesFor('reconcile', west, { timeoutMs: 0, settleMs: 0 })).toEqual([]);

    await api.patchMerge('Cluster', ns.name, cluster, { metadata: { labels: { note: 'metadata-only' } } });
    await sleep(1_000);
    for (const name of east) expect(await messagesFor('reconcile', name, { timeoutMs: 0 })).toEqual([]);
  });

  it('a labelled ConfigMap values layer reaches the Releases that read it when its data changes', async () => {
    const name = unique('values');
    const configMap = unique('vals');
    await api.create(
      'Release',
      ns.name,
      name,
      releaseSpec({
        content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'ConfigMap', name: configMap }] } },
      }),
    );
    expect(await messagesFor('reconcile', name, { settleMs: 0 })).toHaveLength(1);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: {
        metadata: { name: configMap, labels: { 'convoy.dev/watch': 'true' } },
        data: { 'values.yaml': 'a: 1' },
      },
    });
    expect(await messagesFor('reconcile', name)).toHaveLength(1);
    await core.patchNamespacedConfigMap(
      { name: configMap, namespace: ns.name, body: { data: { 'values.yaml': 'a: 2' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect((await messagesFor('reconcile', name))[0]?.cause).toBe(`watch: ConfigMap ${configMap} modified`);
  });

  it('deleting a Release sends a reconcile and removes its Leases', async () => {
    const name = unique('deleted');
    const created = await api.create('Release', ns.name, name, releaseSpec());
    const uid = (created['metadata'] as { uid: string }).uid;
    expect(await messagesFor('reconcile', name, { settleMs: 0 })).toHaveLength(1);
    await api.raw.deleteNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace: ns.name,
      plural: 'releases',
      name,
    });
    expect((await messagesFor('reconcile', name, { settleMs: 0 }))[0]?.cause).toBe('watch: Release deleted');
    await until('the Leases are removed', () => removedLeases.includes(uid), 2_000);
  });

  it('the Leases of a Release deleted while no relay led are swept once the Releases are listed', async () => {
    await until('the orphan Leases are removed', () => removedLeases.includes(ORPHAN_UID), 5_000);
  });

  it(
    '200 quick label updates of one Release: every update is counted in exactly one message, and the messages are at least 1 s apart',
    { timeout: 120_000 },
    async () => {
      // How many messages a burst makes depends on how long the burst takes (one a second, plus the
      // last): a speed, in bench section queueCadence. Here: the rule itself, read from the messages.
      const name = unique('burst');
      await api.create('Release', ns.name, name, releaseSpec());
      expect(await messagesFor('reconcile', name, { settleMs: 0 })).toHaveLength(1);
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            api.patchMerge('Release', ns.name, name, { metadata: { labels: { n: String(batch * 20 + i) } } }),
          ),
        );
      }
      // A coalesced message says how many watch events it stands for: "<first cause> (and N more events)".
      const eventsIn = (m: QueueMessage) => 1 + Number(/\(and (\d+) more events\)$/.exec(m.cause)?.[1] ?? 0);
      const messages: QueueMessage[] = [];
      // Safety net only: the relay sends the last events at most ~1 s after the last update.
      await until(
        'all 200 updates are in messages',
        () => messages.reduce((sum, m) => sum + eventsIn(m), 0) >= 200,
        60_000,
        async () => {
          messages.push(...(await messagesFor('reconcile', name, { atLeast: 1, timeoutMs: 0, settleMs: 0 })));
        },
      );
      expect(messages.reduce((sum, m) => sum + eventsIn(m), 0)).toBe(200);
      for (const m of messages) expect(m.cause).toMatch(/^watch: labels changed/);
      expect(messages.length).toBeLessThan(200);
      // One Release is sent at most once a second (the sender's minSpacingMs); sentAt is stamped as
      // the send leaves the buffer, a few ms at most after the spacing was checked.
      const sentAt = messages.map((m) => Date.parse(m.sentAt)).sort((a, b) => a - b);
      const gaps = sentAt.slice(1).map((t, i) => t - (sentAt[i] ?? 0));
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(950);
    },
  );

  it('a Release with syncPolicy.interval 2s and an old lastAttempted.attemptedAt gets a timer message', async () => {
    const name = unique('timed');
    await api.create('Release', ns.name, name, releaseSpec({ syncPolicy: { interval: '2s' } }));
    await patchReleaseStatus(name, {
      lastAttempted: { attemptedAt: '2026-01-01T00:00:00Z', phase: 'Succeeded' },
    });
    // Safety net only: the timer is due at once (attemptedAt is long past); the relay ticks every 1 s.
    const messages = await messagesFor('reconcile', name, { atLeast: 2, timeoutMs: 15_000, settleMs: 0 });
    expect(messages.map((m) => m.cause)).toEqual(['watch: Release added', 'timer: reconcile interval']);
  });

  it('a Release created while no relay runs is sent by the next relay (it lists on start)', async () => {
    await relay!.stop();
    relay = undefined;
    await drain();
    const name = unique('while-down');
    await api.create('Release', ns.name, name, releaseSpec());
    await sleep(300);
    expect(await messagesFor('reconcile', name, { timeoutMs: 0, settleMs: 0 })).toEqual([]);

    relay = start('relay-b');
    const messages = await messagesFor('reconcile', name, { timeoutMs: 10_000, settleMs: 0 });
    expect(messages[0]?.cause).toBe('watch: Release added');
    expect(await relay.metrics.render()).toMatch(
      /convoy_relay_messages_sent_total\{loop="reconcile"\} [1-9]/,
    );
  });

  it('after a leadership change, a Release whose status is up to date is not sent again; one whose status is behind is', async () => {
    const upToDate = unique('up-to-date');
    const behind = unique('behind');
    await api.create('Release', ns.name, upToDate, releaseSpec());
    await api.create('Release', ns.name, behind, releaseSpec());
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const attempt = { attemptedAt: now, phase: 'Succeeded', renderRef: `sha256:${'1'.repeat(64)}` };
    const applied = {
      type: 'Applied',
      status: 'True',
      reason: 'Applied',
      message: 'applied',
      lastTransitionTime: now,
      observedGeneration: 1,
    };
    await patchReleaseStatus(upToDate, {
      observedGeneration: 1,
      reconciledAt: now,
      lastAttempted: attempt,
      lastSuccessful: attempt,
      conditions: [applied],
    });
    // The spec changed since (observedGeneration 0 < generation 1): its event may have been missed.
    await patchReleaseStatus(behind, {
      observedGeneration: 0,
      reconciledAt: now,
      lastAttempted: attempt,
      lastSuccessful: attempt,
      conditions: [applied],
    });
    await relay!.stop();
    relay = undefined;
    await drain();

    relay = start('relay-takes-over');
    expect((await messagesFor('reconcile', behind, { timeoutMs: 10_000, settleMs: 0 }))[0]?.cause).toBe(
      'watch: Release added',
    );
    expect(await messagesFor('reconcile', upToDate, { timeoutMs: 2_000, settleMs: 0 })).toEqual([]);
  });

  it('only the leader sends; a follower takes over when the leader stops', async () => {
    const leader = relay!;
    await until('relay-b leads', () => leader.leading());
    const follower = start('relay-c');
    await until('relay-c has read the Lease', () => follower.ready());
    expect(follower.leading()).toBe(false);

    await leader.stop();
    relay = follower;
    // Safety net only: the leader gives its Lease back on stop; at worst it expires after 3 s.
    await until('relay-c leads', () => follower.leading(), 15_000);
    await drain();
    const name = unique('after-handover');
    await api.create('Release', ns.name, name, releaseSpec());
    expect(await messagesFor('reconcile', name, { settleMs: 0 })).toHaveLength(1);
  });

  it('a relay whose list takes several pages (2 Releases a page) indexes every Release of the cluster', async () => {
    for (let i = 0; i < 5; i++) await api.create('Release', ns.name, unique('paged'), releaseSpec());
    await relay!.stop();
    relay = start('relay-paged', { listPageSize: 2 });
    await until('relay-paged leads and has listed', () => relay!.leading() && relay!.ready(), 15_000);
    // The index holds what the cluster holds. Test files running in parallel create and delete
    // Releases of their own meanwhile (the relay indexes every namespace), so a list taken before
    // the relay started is no measure: the index and a list of the same moment must agree (a lost
    // page would keep them apart), the watch catching up with the others' changes.
    const counts = { listed: -1, indexed: -2 };
    await until(
      'the index counts every Release the cluster lists (more than two pages of 2)',
      () => counts.indexed === counts.listed && counts.listed > 5,
      15_000,
      async () => {
        const listed = (await kc
          .makeApiClient(CustomObjectsApi)
          .listClusterCustomObject({ group: API_GROUP, version: API_VERSION, plural: 'releases' })) as {
          items: unknown[];
        };
        counts.listed = listed.items.length;
        counts.indexed = Number(
          /^convoy_relay_releases (\d+)$/m.exec(await relay!.metrics.render())?.[1] ?? -1,
        );
      },
    );
  });
});
