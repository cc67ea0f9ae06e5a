/**
 * The notify loop on the real apiserver, as the functions' shipped identity (functionsRbac), with
 * destination Secrets read as the Release's ServiceAccount and a real HTTP receiver verifying the
 * webhook signature. The Release's verdict is set by writing its status (the loops that would
 * write it are not under test here): Ready → failing → recovered must reach the receiver as
 * exactly three deliveries, in order, each once, however often the message comes; runs at once,
 * a failing destination, a Secret the Release's identity may not read, and a run killed between
 * its status write and its send keep that.
 */
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createEgress } from '../../adapters/egress/client.ts';
import { createEventRecorder } from '../../adapters/kube/events.ts';
import { createIdentityReads } from '../../adapters/kube/identity-reads.ts';
import { createKubeClient } from '../../adapters/kube/http.ts';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { createNotificationStore } from '../../adapters/kube/notification-store.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createDeliver } from '../../adapters/notify/deliver.ts';
import type { Condition } from '../../domain/api/common.ts';
import { parseEgressAllow } from '../../domain/egress/policy.ts';
import { CLAIM_MS } from '../../domain/notify/records.ts';
import type { Outcome } from '../../domain/runtime/outcome.ts';
import type { QueueMessage } from '../../domain/runtime/queue-message.ts';
import { createNotifyRun, type NotifyDeps } from '../../functions/notify/notify-run.ts';
import type { RecordContext, RecordHandler } from '../../functions/runtime/sqs-batch-handler.ts';
import { createLogger } from '../../platform/logger.ts';
import { asFunctions, grant } from '../harness/functions-identity.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../harness/notify-receivers.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';

const T = '2026-11-29T10:00:00Z';
const REF = `sha256:${'a'.repeat(64)}`;
const HMAC_KEY = 'notify-test-key';

const cond = (type: string, status: Condition['status'], reason: string, generation: number): Condition => ({
  type,
  status,
  reason,
  message: `${type} says ${reason}`,
  lastTransitionTime: T,
  observedGeneration: generation,
});

describe('notifications on the real apiserver', () => {
  let admin: KubeConfig;
  let installation: FreshNamespace;
  let tenant: FreshNamespace;
  let functions: Awaited<ReturnType<typeof asFunctions>>;
  let receiver: WebhookReceiver;
  let run: RecordHandler;
  let runWith: (deps: Partial<NotifyDeps>) => RecordHandler;
  const logger = createLogger({ level: 'warn' });

  beforeAll(async () => {
    admin = kubeConfigFor(inject('kubeconfigPath'));
    installation = await freshNamespace(admin, 'notify-convoy');
    tenant = await freshNamespace(admin, 'notify-team');
    functions = await asFunctions(admin, installation.name, [tenant.name]);
    receiver = await startWebhookReceiver(HMAC_KEY);
    const core = admin.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({
      namespace: tenant.name,
      body: { metadata: { name: 'deployer' } },
    });
    // The Release's identity may read the Secret `hook`, not `forbidden-hook`.
    await grant(admin, tenant.name, 'deployer-hook', { kind: 'ServiceAccount', name: 'deployer' }, [
      { apiGroups: [''], resources: ['secrets'], resourceNames: ['hook'], verbs: ['get'] },
    ]);
    for (const name of ['hook', 'forbidden-hook'])
      await core.createNamespacedSecret({
        namespace: tenant.name,
        body: { metadata: { name }, stringData: { url: `${receiver.url}/${name}`, hmacKey: HMAC_KEY } },
      });
    const kc = functions.config;
    runWith = (over) =>
      createNotifyRun({
        notifications: createNotificationStore(kc),
        releases: createReleaseSource(kc),
        secretsAs: createIdentityReads(kc),
        tenancy: { defaultServiceAccount: undefined },
        deliver: createDeliver({
          egress: createEgress({ allow: parseEgressAllow('127.0.0.1', 'test'), clusterNetworks: [] }),
        }),
        ...over,
      });
    run = createNotifyRun({
      notifications: createNotificationStore(kc),
      releases: createReleaseSource(kc),
      secretsAs: createIdentityReads(kc),
      tenancy: { defaultServiceAccount: undefined },
      deliver: createDeliver({
        egress: createEgress({ allow: parseEgressAllow('127.0.0.1', 'test'), clusterNetworks: [] }),
      }),
      events: createEventRecorder(kc, { controller: 'convoy.dev/notify', instance: 'notify-test' }),
    });
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await functions?.close();
    await tenant?.delete();
    await installation?.delete();
  });

  const api = () => convoyApi(admin);
  const adminClient = () => createKubeClient(fromClientNodeKubeConfig(admin));

  async function createRelease(name: string, labels = { team: 'payments' }): Promise<string> {
    const created = await api().create(
      'Release',
      tenant.name,
      name,
      releaseSpec({ serviceAccountName: 'deployer' }),
      {
        labels,
      },
    );
    return String((created['metadata'] as { uid: string }).uid);
  }

  /** The Release's status as its loops would leave it: ready, or Healthy False (a failure). */
  async function setVerdict(name: string, verdict: 'ready' | 'failing') {
    const release = await api().getRelease(tenant.name, name);
    const generation = release.metadata.generation ?? 1;
    await adminClient().patch(
      `/apis/convoy.dev/v1alpha1/namespaces/${tenant.name}/releases/${name}/status`,
      {
        status: {
          observedGeneration: generation,
          lastAttempted: { attemptedAt: T, phase: 'Succeeded', renderRef: REF },
          lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef: REF },
          conditions: [
            cond('Applied', 'True', 'Applied', generation),
            cond('InSync', 'True', 'InSync', generation),
            verdict === 'ready'
              ? cond('Healthy', 'True', 'Healthy', generation)
              : cond('Healthy', 'False', 'Degraded', generation),
          ],
        },
      },
      { type: 'merge' },
    );
  }

  async function createNotification(name: string, secret: string) {
    await api().create('Notification', tenant.name, name, {
      for: [{ kind: 'Release', selector: { matchLabels: { team: 'payments' } } }],
      transitions: ['Ready', 'Failed', 'Recovered'],
      to: [{ webhook: { secretRef: { name: secret } } }],
    });
  }

  let sequence = 0;
  /** One notify message for the Release, as the relay sends it. */
  function deliver(name: string, uid: string, handler: RecordHandler = run): Promise<Outcome> {
    sequence += 1;
    const message: QueueMessage = {
      v: 1,
      loop: 'notify',
      namespace: tenant.name,
      name,
      uid,
      cause: 'test: verdict changed',
      sentAt: new Date().toISOString(),
    };
    const ctx = {
      logger,
      receiveCount: 1,
      messageId: `m-${sequence}`,
      record: {},
    } as unknown as RecordContext;
    return handler(message, ctx);
  }

  const notificationRv = async (name: string) =>
    String(
      ((await api().get('Notification', tenant.name, name))['metadata'] as { resourceVersion: string })
        .resourceVersion,
    );

  it('Ready → failing → recovered sends exactly three webhook deliveries, in order; duplicates change nothing', async () => {
    await createNotification('oncall', 'hook');
    const uid = await createRelease('api');
    const path = '/hook';
    const sent = () => receiver.verified.filter((r) => r.path === path);
    for (const [verdict, count] of [
      ['ready', 1],
      ['failing', 2],
      ['ready', 3],
    ] as const) {
      await setVerdict('api', verdict);
      expect((await deliver('api', uid)).kind).toBe('done');
      expect(sent()).toHaveLength(count);
      // Duplicates of the message: no send, no status write.
      const rv = await notificationRv('oncall');
      expect((await deliver('api', uid)).kind).toBe('done');
      expect((await deliver('api', uid)).kind).toBe('done');
      expect(sent()).toHaveLength(count);
      expect(await notificationRv('oncall')).toBe(rv);
    }
    const bodies = sent().map((r) => JSON.parse(r.body) as { id: string; transition: string });
    expect(bodies.map((b) => b.transition)).toEqual(['Ready', 'Failed', 'Recovered']);
    expect(bodies.map((b) => b.id)).toEqual([`${uid}/1`, `${uid}/2`, `${uid}/3`]);
    const status = (await api().get('Notification', tenant.name, 'oncall'))['status'] as {
      objects: { name: string; state: string; sequence: number; deliveries: { sentSequence: number }[] }[];
      conditions: Condition[];
    };
    expect(status.objects[0]).toMatchObject({
      name: 'api',
      state: 'ready',
      sequence: 3,
      deliveries: [{ sentSequence: 3 }],
    });
    expect(status.conditions.find((c) => c.type === 'Delivering')).toMatchObject({
      status: 'True',
      reason: 'Delivered',
    });
  });

  it('two runs at once for one transition deliver it once: the claim is written with a resourceVersion precondition', async () => {
    await createNotification('concurrent', 'hook');
    const uid = await createRelease('db');
    await setVerdict('db', 'ready');
    const ofDb = () =>
      receiver.verified.filter(
        (r) => (JSON.parse(r.body) as { object?: { name?: string } }).object?.name === 'db',
      );
    const outcomes = await Promise.all([deliver('db', uid), deliver('db', uid), deliver('db', uid)]);
    // Two Notifications watch db (oncall and concurrent): one Ready each, whatever the runs raced.
    expect(ofDb()).toHaveLength(2);
    expect(outcomes.map((o) => o.kind).filter((k) => k !== 'done' && k !== 'requeueAfter')).toEqual([]);
  });

  it('a destination answering 500 is retried with backoff and delivered once it recovers', async () => {
    await createNotification('flaky', 'hook');
    const uid = await createRelease('queue');
    await setVerdict('queue', 'ready');
    const ofQueue = () =>
      receiver.verified.filter(
        (r) => (JSON.parse(r.body) as { object?: { name?: string } }).object?.name === 'queue',
      );
    // Three Notifications watch queue now; the next three answers fail.
    receiver.failNext({ status: 500 }, { status: 500 }, { status: 500 });
    const first = await deliver('queue', uid);
    expect(first.kind).toBe('retry');
    expect(ofQueue()).toHaveLength(0);
    const status = (await api().get('Notification', tenant.name, 'flaky'))['status'] as {
      conditions: Condition[];
    };
    expect(status.conditions.find((c) => c.type === 'Delivering')).toMatchObject({
      status: 'False',
      reason: 'DestinationFailing',
    });
    // The message comes back (SQS visibility): every destination owed delivers once.
    expect((await deliver('queue', uid)).kind).toBe('done');
    expect(ofQueue()).toHaveLength(3);
    expect((await deliver('queue', uid)).kind).toBe('done');
    expect(ofQueue()).toHaveLength(3);
    const after = (await api().get('Notification', tenant.name, 'flaky'))['status'] as {
      conditions: Condition[];
    };
    expect(after.conditions.find((c) => c.type === 'Delivering')).toMatchObject({ status: 'True' });
  });

  it("a Secret the Release's identity may not read is refused, named, and nothing is sent", async () => {
    await createNotification('refused', 'forbidden-hook');
    const uid = await createRelease('web');
    await setVerdict('web', 'failing');
    const before = receiver.verified.length;
    // Not retried: the RBAC decides, not time.
    expect((await deliver('web', uid)).kind).toBe('done');
    expect(receiver.verified.filter((r) => r.path === '/forbidden-hook')).toHaveLength(0);
    expect(receiver.requests.filter((r) => r.path === '/forbidden-hook')).toHaveLength(0);
    const status = (await api().get('Notification', tenant.name, 'refused'))['status'] as {
      conditions: Condition[];
    };
    const delivering = status.conditions.find((c) => c.type === 'Delivering');
    expect(delivering).toMatchObject({ status: 'False', reason: 'DestinationFailing' });
    expect(delivering?.message).toContain('forbidden-hook');
    expect(delivering?.message).toContain(`system:serviceaccount:${tenant.name}:deployer`);
    expect(delivering?.message).not.toContain(receiver.url);
    // The other Notifications' webhook (oncall, concurrent, flaky) took web's Failed: one destination's refusal holds up no other.
    expect(receiver.verified.length).toBe(before + 3);
  });

  it('a run killed after recording the transition never loses it and never sends it twice: the next run after its claim expires delivers it once', async () => {
    await api().create('Notification', tenant.name, 'crash', {
      for: [{ kind: 'Release', name: 'cache' }],
      transitions: ['Ready', 'Failed', 'Recovered'],
      to: [{ webhook: { secretRef: { name: 'hook' } } }],
    });
    const uid = await createRelease('cache', { team: 'platform' });
    await setVerdict('cache', 'ready');
    const ofCache = () =>
      receiver.verified.filter(
        (r) => (JSON.parse(r.body) as { object?: { name?: string } }).object?.name === 'cache',
      );
    // The process dies between the status write (transition pending, destination claimed) and the send.
    const killed = runWith({
      deliver: () => Promise.reject(new Error('killed -9 before the send')),
    });
    await expect(deliver('cache', uid, killed)).rejects.toThrow('killed -9');
    expect(ofCache()).toHaveLength(0);
    // The redelivery while the dead run's claim holds waits for it; nothing is sent twice.
    expect((await deliver('cache', uid)).kind).toBe('requeueAfter');
    expect(ofCache()).toHaveLength(0);
    // Once the claim has expired, the transition still owed is delivered, once, with its id.
    const later = runWith({ now: () => new Date(Date.now() + CLAIM_MS + 1000) });
    expect((await deliver('cache', uid, later)).kind).toBe('done');
    expect((await deliver('cache', uid, later)).kind).toBe('done');
    expect(ofCache().map((r) => (JSON.parse(r.body) as { id: string }).id)).toEqual([`${uid}/1`]);
  });
});
