/**
 * Notifications through convoy's whole runtime (dev/runtime.ts: fauxqs SQS, the relay watching
 * Releases and Notifications, the real function handlers with the notify loop on its own queue) on
 * the real kube-apiserver: a Release whose custom health rule reads a ConfigMap of its render goes
 * Ready, then failing (a commit makes the rule false), then recovered (a commit makes it true
 * again) — and a real HTTP receiver, verifying the HMAC signature, gets exactly three deliveries,
 * in order, each once. Then the runtime restarts (relay and queues from nothing): nothing is sent
 * again, since the records in the Notification's status are current.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Annotation } from '../../domain/reconcile/annotations.ts';
import { combinedVerdict } from '../../domain/status/verdict.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../harness/notify-receivers.ts';
import { startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';

const HMAC_KEY = 'notify-runtime-key';
const SAFETY_NET_MS = 120_000;
const configMap = (ok: boolean) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-health\ndata:\n  ok: "${String(ok)}"\n`;

describe('notifications through the runtime', () => {
  let env: RuntimeEnv;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver(HMAC_KEY);
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'notify-e2e', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
      // The receiver is the one more loopback server the egress policy lets the notify loop reach.
      egressAllow: [receiver.host],
    });
    await env.kc.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: env.ns.name,
      body: { metadata: { name: 'hook' }, stringData: { url: `${receiver.url}/hook`, hmacKey: HMAC_KEY } },
    });
    await env.api.create('Notification', env.ns.name, 'oncall', {
      for: [{ kind: 'Release', name: 'app' }],
      transitions: ['Ready', 'Failed', 'Recovered'],
      to: [{ webhook: { secretRef: { name: 'hook' } } }],
    });
  }, 120_000);
  afterAll(async () => {
    await env?.close();
    await receiver?.close();
  });

  const transitions = () =>
    receiver.verified.map((r) => (JSON.parse(r.body) as { transition: string; id: string }).transition);
  const deliveries = async (count: number, what: string) => {
    try {
      await until(what, () => Promise.resolve(receiver.verified.length >= count ? true : undefined), {
        timeoutMs: SAFETY_NET_MS,
        intervalMs: 200,
      });
    } catch (error) {
      // What the notify loop and the relay said, to tell a lost message from a wrong decision.
      const notify = env.logs.filter((l) => /"loop":"notify"|"level":"(warn|error)"/.test(JSON.stringify(l)));
      throw new Error(
        `${(error as Error).message}; notify lines: ${JSON.stringify(notify.slice(-10))}; verdict: ${JSON.stringify(combinedVerdict(await env.getRelease('app')))}`,
      );
    }
  };
  const syncNow = (at: string) =>
    env.api.patchMerge('Release', env.ns.name, 'app', {
      metadata: { annotations: { [Annotation.syncRequestedAt]: at } },
    });

  it('Ready → failing → recovered: exactly three deliveries, in order; a restart sends nothing again', async () => {
    await env.repo('app', { 'cm.yaml': configMap(true) });
    const release = await env.createRelease('app', {
      source: { git: { url: `${env.git.url}/app.git`, ref: { branch: 'main' } } },
      healthAssessment: {
        // A false rule is Progressing until this deadline, then Degraded: the failure.
        progressDeadline: '5s',
        checks: [{ apiVersion: 'v1', kind: 'ConfigMap', healthy: "object.data.ok == 'true'" }],
      },
    });
    const uid = release.metadata.uid ?? '';
    await deliveries(1, 'the Ready delivery');

    await env.commit('app', { 'cm.yaml': configMap(false) });
    await syncNow(new Date().toISOString());
    await deliveries(2, 'the Failed delivery');
    expect(combinedVerdict(await env.getRelease('app')).ready).toBe(false);

    await env.commit('app', { 'cm.yaml': configMap(true) });
    await syncNow(new Date(Date.now() + 1000).toISOString());
    await deliveries(3, 'the Recovered delivery');
    await until(
      'app is Ready',
      async () => (combinedVerdict(await env.getRelease('app')).ready ? true : undefined),
      {
        timeoutMs: SAFETY_NET_MS,
        intervalMs: 200,
      },
    );

    expect(transitions()).toEqual(['Ready', 'Failed', 'Recovered']);
    const ids = receiver.verified.map((r) => (JSON.parse(r.body) as { id: string }).id);
    expect(ids).toEqual([`${uid}/1`, `${uid}/2`, `${uid}/3`]);

    // A restart: the relay lists everything again and derives from the Notification's status.
    await env.restart();
    await until(
      'the restarted relay leads',
      () => Promise.resolve(env.runtime.relay.leading() && env.runtime.relay.ready() ? true : undefined),
      { timeoutMs: SAFETY_NET_MS, intervalMs: 200 },
    );
    // Whatever the observers' first runs after the restart write, the verdict stays ready: nothing to send.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect(receiver.verified).toHaveLength(3);
    expect(receiver.requests).toHaveLength(3);
  }, 400_000);
});
