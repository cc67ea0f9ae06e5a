/**
 * The queue contract end to end (ARCHITECTURE.md, "The queue contract" and
 * "One run per Release and loop at a time"): convoy's whole runtime
 * (dev/runtime.ts — fauxqs SQS, the relay, a poller per queue calling the
 * real reconcile function handler) against the test apiserver and a real git
 * server. Nothing here calls a handler directly: every run starts as an SQS
 * message, sent by the relay or by the test with SendMessage(Batch).
 *
 * Observations come from three places: the Release status (what a user
 * sees), the handler's structured log lines (one per record outcome, with
 * messageId and receiveCount — i.e. what SQS delivered), and the Lease in
 * the installation namespace. Every wait is bounded.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Message } from '@aws-sdk/client-sqs';
import {
  BatchV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type V1Lease,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DeadLetterAttribute } from '../../adapters/sqs/dead-letter.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { leaseName } from '../../domain/runtime/lease.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { tapQueue, type QueueTap } from '../harness/queue-tap.ts';
import { appliedOf, startRuntimeEnv, until, type LogLine, type RuntimeEnv } from '../harness/runtime-env.ts';

const configMap = (name: string, annotations: Record<string, string> = {}) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  annotations: ${JSON.stringify(annotations)}\ndata: {k: v}\n`;

/** A Job whose pod waits for a Node labelled `nodeLabel: "true"` (none is, until the test labels one). */
const job = (name: string, wave: number, nodeLabel: string) =>
  `apiVersion: batch/v1\nkind: Job\nmetadata: {name: ${name}, annotations: {convoy.dev/sync-wave: "${wave}"}}\n` +
  `spec: {template: {spec: {restartPolicy: Never, nodeSelector: {${nodeLabel}: "true"}, containers: [{name: m, image: busybox}]}}}\n`;

const at = (line: LogLine) => Date.parse(line.time);
const seconds = (ms: readonly number[]) => ms.map((m) => Math.round(m / 100) / 10);

/** The queue's own visibility timeout in the first runtime: shorter than every wait the tests below ask for but the first two backoffs. */
const QUEUE_VISIBILITY_SECONDS = 5;

/** What the runs measured, printed at the end for the record. */
const measured: Record<string, unknown> = {};

/**
 * An HTTP proxy in front of the git server that holds every request for
 * `delayMs`: a reconcile through it takes at least that long, so two runs
 * that were not kept apart would overlap.
 */
async function startSlowProxy(
  target: () => string,
  delayMs: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    setTimeout(() => {
      const upstream = httpRequest(
        new URL(req.url ?? '/', target()),
        { method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', (error) => res.destroy(error));
      req.pipe(upstream);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('the queue contract through the real runtime', () => {
  let env: RuntimeEnv;
  let appUrl: string;
  /** A proxy in front of the env's Git server that holds each request 600 ms (the contention row). */
  let proxy: { url: string; close(): Promise<void> };
  /** Every delivery and visibility change of the reconcile queue, as the runtime's SQS client saw them. */
  let queue: QueueTap;

  beforeAll(async () => {
    // One batch at a time per queue: the tests below reason about what meets inside one batch
    // (copies handled concurrently) and what arrives in the next; concurrent batches, as on
    // Lambda, are lease-exclusive.test.ts's case.
    // The slow proxy first (its target, the env's Git server, is read per request): the egress
    // allow list of the env names it.
    proxy = await startSlowProxy(() => env.git.url, 600);
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'queue-e2e', {
      egressAllow: [new URL(proxy.url).host],
      relayTickMs: 200,
      visibilityTimeoutSeconds: QUEUE_VISIBILITY_SECONDS,
      pollerConcurrency: 1,
    });
    queue = tapQueue(env.runtime.sqs, env.runtime.queues.reconcile.queueUrl);
    appUrl = (await env.repo('apps', { 'app/cm.yaml': configMap('app-config') })).url;
  });

  afterAll(async () => {
    queue?.stop();
    const errors = env?.logs.filter((l) => l.level === 'error') ?? [];
    if (errors.length > 0)
      console.error(`the runtime logged errors:\n${errors.map((l) => JSON.stringify(l)).join('\n')}`);
    console.info(`queue-e2e measurements: ${JSON.stringify(measured)}`);
    await env?.close();
    await proxy?.close();
  });

  /** Runs of the reconcile loop for a Release: one 'reconciled' line per run that got past the Lease. */
  const runs = (name: string) => env.recordLines(name, { msg: 'reconciled' });

  async function releaseWhen(
    name: string,
    what: string,
    check: (r: Awaited<ReturnType<RuntimeEnv['getRelease']>>) => boolean,
    timeoutMs = 15_000,
  ) {
    return until(
      what,
      async () => {
        const release = await env.getRelease(name);
        return check(release) ? release : undefined;
      },
      { timeoutMs },
    );
  }

  it('a Release created through the API reaches Applied True through relay → SQS → reconcile function', async () => {
    const createdAt = Date.now();
    const created = await env.createRelease('first', {
      source: { git: { url: appUrl, ref: { branch: 'main' }, path: 'app' } },
    });
    const release = await releaseWhen('first', 'Applied is True', (r) => {
      const applied = appliedOf(r);
      return applied?.status === 'True' && applied.observedGeneration === r.metadata.generation;
    });
    measured['createdToAppliedMs'] = Date.now() - createdAt;

    expect(appliedOf(release)).toMatchObject({ reason: 'Applied' });
    expect(release.status?.lastAttempted?.phase).toBe('Succeeded');
    // The run was an SQS record: the relay's message for the watch event, delivered once, acknowledged.
    const done = await until('the record is acknowledged', () => {
      const lines = env.recordLines('first', { msg: 'done' });
      return lines.length > 0 ? lines : undefined;
    });
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({
      uid: created.metadata.uid,
      cause: 'watch: Release added',
      receiveCount: 1,
      loop: 'reconcile',
    });
    measured['createdToAckedMs'] = at(done[0]) - createdAt;
    measured['firstRunMs'] = done[0]['durationMs'];
    expect(env.runtime.relay.metrics.messagesSent.get({ loop: 'reconcile' })).toBeGreaterThanOrEqual(1);
    const cm = await env.kc
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ namespace: env.ns.name, name: 'app-config' });
    expect(cm.metadata?.managedFields?.some((f) => f.manager === 'convoy')).toBe(true);
  });

  it('a spec change reconciles again; a status-only update does not', async () => {
    await env.createRelease('changes', {
      source: { git: { url: appUrl, ref: { branch: 'main' }, path: 'app' } },
    });
    const first = await releaseWhen(
      'changes',
      'Applied is True for generation 1',
      (r) => appliedOf(r)?.status === 'True',
    );
    expect(first.metadata.generation).toBe(1);
    await until('the first run is logged', () => runs('changes').length === 1);

    // A status-only update, as another writer (the health function) makes one: a merge patch of
    // /status with a field convoy-release does not own. resourceVersion moves, generation does not.
    // Half a second past: never the health function's own whole-second checkedAt, which it may
    // have written in this very second (then the patch would change nothing).
    const checkedAt = new Date().toISOString().replace(/\.\d+Z$/, '.500Z');
    const patched = (await env.api.raw.patchNamespacedCustomObjectStatus(
      {
        group: API_GROUP,
        version: API_VERSION,
        namespace: env.ns.name,
        plural: 'releases',
        name: 'changes',
        body: {
          status: {
            healthSummary: {
              renderRef: first.status?.lastAttempted?.renderRef ?? 'none',
              checkedAt,
              total: 1,
              healthy: 1,
              progressing: 0,
              degraded: 0,
              missing: 0,
              unknown: 0,
              objects: [],
            },
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as { metadata: { resourceVersion: string; generation: number } };
    expect(patched.metadata.resourceVersion).not.toBe(first.metadata.resourceVersion);
    expect(patched.metadata.generation).toBe(1);

    await sleep(2_500);
    expect(runs('changes')).toHaveLength(1);
    const quiet = await env.getRelease('changes');
    expect(quiet.status?.lastAttempted?.attemptedAt).toBe(first.status?.lastAttempted?.attemptedAt);

    // A spec change bumps generation. The relay's watch delivers events in order, so by the time
    // it sends this one it has seen (and filtered out) the status update above.
    await env.api.patchMerge('Release', env.ns.name, 'changes', { spec: { syncPolicy: { interval: '6m' } } });
    const second = await releaseWhen('changes', 'Applied is True for generation 2', (r) => {
      const applied = appliedOf(r);
      return applied?.status === 'True' && applied.observedGeneration === 2;
    });
    expect(second.status?.observedGeneration).toBe(2);
    expect(Date.parse(second.status!.lastAttempted!.attemptedAt)).toBeGreaterThan(
      Date.parse(first.status!.lastAttempted!.attemptedAt),
    );
    const all = await until('the second run is logged', () =>
      runs('changes').length === 2 ? runs('changes') : undefined,
    );
    expect(all[1]['cause']).toBe('watch: spec changed (generation 1 → 2)');
  });

  it(
    'the same message delivered twice at once runs the loop one at a time, and the duplicate chains collapse to one',
    { timeout: 180_000 },
    async () => {
      // The observables:
      // - Mutual exclusion: a watch on the installation namespace's Leases sees every write of
      //   convoy-reconcile-<uid> in resourceVersion order. Each run sets holderIdentity to its own id
      //   (`reconcile@<its mark>`) with the sentAt of its message, and — failing, it must record the
      //   failure — gives it back explicitly: the holder as its status write left it and no sentAt
      //   (domain/runtime/lease-close.ts). A run may also leave its Lease closed by its status write
      //   alone: the Release's status.reconciledAt then carries the holder's mark, and the next run
      //   takes the Lease from that holder directly. Two runs at once would show up as one held Lease
      //   replaced directly by another holder while the Release did not carry the first holder's
      //   mark yet: a watch on the Release records its marks, and the resourceVersions of one etcd
      //   order the Lease's writes and the Release's. A take is known by its acquireTime (unique per
      //   take): a take may move its own holder to a later id in a second write (one that repeated a
      //   holder given back earlier), which is no handover. The Lease lasts 35 s here, so no legitimate
      //   expiry takeover can happen. The git source sits behind a proxy that holds each request
      //   600 ms, so every run lasts long enough for an overlap to be visible.
      // - Contention really happened: the two copies arrive in one batch (one SendMessageBatch, one
      //   ReceiveMessage), are handled concurrently, and one of them is turned away (dropped: covered
      //   by its twin's run in progress).
      //   (The dev poller hands over one batch at a time, so in this runtime runs can only meet inside
      //   a batch; a live holder against a later batch, as on Lambda, is lease.test.ts's "busy" row.)
      // - Collapse: the Release fails to fetch (missing branch) and retries every 1 s, so every run
      //   records itself as the Lease's follow-up. Of the relay's message and the two copies, exactly
      //   one chain survives: the other two are dropped (superseded on a redelivery, or covered by the
      //   run of their twin), and afterwards only the survivor runs and the Lease names it.
      const events: {
        type: string;
        name: string;
        holder: string;
        held: boolean;
        take: string;
        followUp: string | undefined;
        rv: bigint;
      }[] = [];
      const marks: { reconciledAt: string | undefined; rv: bigint }[] = [];
      let watchEnded: unknown;
      const watch = await new Watch(env.kc).watch(
        `/apis/coordination.k8s.io/v1/namespaces/${env.installation.name}/leases`,
        {},
        (type: string, lease: V1Lease) =>
          events.push({
            type,
            name: lease.metadata?.name ?? '',
            // A deleted Lease (released with nothing to record) is as free as one without a holder.
            holder: type === 'DELETED' ? '' : (lease.spec?.holderIdentity ?? ''),
            // Held by a run: a holder with the sentAt of the message it runs (a release clears it).
            held:
              type !== 'DELETED' &&
              (lease.spec?.holderIdentity ?? '') !== '' &&
              (lease.metadata?.annotations?.['convoy.dev/holder-sent-at'] ?? '') !== '',
            take:
              lease.spec?.acquireTime instanceof Date
                ? lease.spec.acquireTime.toISOString()
                : String(lease.spec?.acquireTime ?? ''),
            followUp: lease.metadata?.annotations?.['convoy.dev/follow-up-message-id'],
            rv: BigInt(lease.metadata?.resourceVersion ?? '0'),
          }),
        (error: unknown) => (watchEnded = error ?? 'the watch ended'),
      );
      const releaseWatch = await new Watch(env.kc).watch(
        `/apis/${API_GROUP}/${API_VERSION}/namespaces/${env.ns.name}/releases`,
        { fieldSelector: 'metadata.name=dup' },
        (
          _type: string,
          release: { metadata?: { resourceVersion?: string }; status?: { reconciledAt?: string } },
        ) =>
          marks.push({
            reconciledAt: release.status?.reconciledAt,
            rv: BigInt(release.metadata?.resourceVersion ?? '0'),
          }),
        (error: unknown) => (watchEnded = error ?? 'the Release watch ended'),
      );
      try {
        const created = await env.createRelease('dup', {
          source: { git: { url: `${proxy.url}/apps.git`, ref: { branch: 'no-such-branch' } } },
          syncPolicy: { retryBackoff: { initial: '1s', factor: 1, max: '1s' } },
        });
        const uid = created.metadata.uid!;
        const relayMessage = await until(
          'the relay message ran once',
          () => runs('dup')[0]?.['messageId'] as string | undefined,
        );

        const body = env.messageBody('dup', uid, 'test: duplicate delivery');
        const [copyA, copyB] = await env.sendRaw('reconcile', [body, body]);
        const chains = [relayMessage, copyA, copyB];

        // A copy is dropped either as superseded (a redelivery after a newer run recorded its own
        // follow-up) or as covered (it found the Lease held by a run of a message sent no earlier).
        const collapsed = (id: string) =>
          env
            .recordLines('dup', { messageId: id, msg: 'dropped' })
            .some((l) =>
              /^(superseded by follow-up|covered by the run in progress|already handled)/.test(
                String(l['reason']),
              ),
            );
        // Safety net only: the collapse takes a few runs of ~1 s each.
        await until('two of the three chains are dropped', () => chains.filter(collapsed).length >= 2, {
          timeoutMs: 45_000,
        });
        const collapsedAt = Date.now();
        expect(chains.filter(collapsed)).toHaveLength(2);
        const survivor = chains.find((id) => !collapsed(id))!;

        // Both copies were handled; the two copies met at the Lease, and the one turned away was
        // dropped at once (its twin was running): no wait, no receive spent.
        for (const copy of [copyA, copyB])
          expect(env.recordLines('dup', { messageId: copy }).length).toBeGreaterThan(0);
        const covered = env
          .recordLines('dup', { msg: 'dropped' })
          .filter((l) => String(l['reason']).startsWith('covered by the run in progress'));
        expect(covered.length).toBeGreaterThanOrEqual(1);
        const busy = covered;

        // After the collapse, only the survivor runs (two runs of it, whatever they take), and the
        // Lease records it as the one follow-up.
        const later = await until(
          'two more runs after the collapse',
          () => {
            const since = runs('dup').filter((l) => at(l) > collapsedAt);
            return since.length >= 2 ? since : undefined;
          },
          { timeoutMs: 45_000 },
        );
        expect(new Set(later.map((l) => l['messageId']))).toEqual(new Set([survivor]));
        const lease = await env.lease(uid);
        expect(lease?.metadata?.annotations?.['convoy.dev/follow-up-message-id']).toBe(survivor);

        // Never two holders: between two different held states there is always a release.
        expect(watchEnded).toBeUndefined();
        const writes = events.filter((e) => e.name === leaseName('reconcile', uid));
        // A direct handover is fine only once the Release carried the previous holder's mark.
        const closedBefore = (holder: string, rv: bigint) =>
          marks.some(
            (m) => m.reconciledAt !== undefined && `reconcile@${m.reconciledAt}` === holder && m.rv < rv,
          );
        const violations = writes
          .filter(
            (e, i) =>
              i > 0 &&
              e.held &&
              writes[i - 1].held &&
              writes[i - 1].take !== e.take &&
              !closedBefore(writes[i - 1].holder, e.rv),
          )
          .map((e) => ({
            ...e,
            rv: String(e.rv),
            before: writes
              .filter((w) => w.rv < e.rv)
              .slice(-2)
              .map((w) => ({ ...w, rv: String(w.rv) })),
            releaseMarks: marks.map((m) => `${m.reconciledAt ?? '-'}@${m.rv}`),
          }));
        expect(violations).toEqual([]);
        // Each take (a held acquireTime) and the holder it ran as: its last held write.
        const takes = new Map<string, string>();
        for (const e of writes) if (e.held) takes.set(e.take, e.holder);
        const acquisitions = [...takes.values()];
        expect(new Set(acquisitions).size).toBe(acquisitions.length); // every run has its own holder id
        expect(acquisitions.length).toBeGreaterThanOrEqual(3);
        measured['duplicates'] = {
          survivor: survivor === relayMessage ? 'relay message' : 'a copy',
          coveredDrops: busy.length,
          leaseAcquisitions: acquisitions.length,
        };

        // End the chain between two runs (just after one ended, while its message is invisible for
        // 1 s): the next delivery finds no Release and is dropped.
        const outcomes = () =>
          env.recordLines('dup', { messageId: survivor }).filter((l) => l['outcome'] !== undefined).length;
        const seen = outcomes();
        await until('the survivor ends another run', () => outcomes() > seen);
        await env.deleteRelease('dup');
        await until(
          'the survivor is dropped',
          () => env.recordLines('dup', { messageId: survivor, msg: 'dropped' }).length > 0,
        );
      } finally {
        watch.abort();
        releaseWatch.abort();
        await env.deleteRelease('dup').catch(() => undefined);
      }
    },
  );

  /**
   * The redeliveries of one message, as the queue made them: each must follow exactly one
   * visibility change, asked by the delivery before it, of what its outcome line logged, and the
   * queue must have held the message at least that long. A runtime that stopped changing the
   * visibility would show no change (the message comes back after the queue's own timeout).
   */
  function expectHeldAsAsked(messageId: string, outcomes: readonly LogLine[]): number[] {
    // The redeliveries that followed these outcomes (a later one may be in flight already).
    const holds = queue.holds(messageId).slice(0, outcomes.length);
    const asked = outcomes.map((l) => l['visibilitySeconds'] as number);
    expect(holds.map((h) => h.receiveCount)).toEqual(holds.map((_, i) => i + 2));
    holds.forEach((hold, i) => {
      expect(hold.askedSeconds).toEqual([asked[i]]);
      expect(hold.heldMs).toBeGreaterThanOrEqual((asked[i] ?? Number.NaN) * 1000);
    });
    return holds.map((h) => h.heldMs);
  }

  it(
    'a wave waiting for health is rechecked through visibility, never before the 10 s its outcome asked, and the first recheck after the Job completes applies the next wave',
    { timeout: 180_000 },
    async () => {
      // How often the recheck really comes (10 s + the queue's and the poller's delay) is a speed:
      // bench section queueCadence. Here: what was asked, and that the queue kept to it.
      const nodeLabel = `convoy.test/${env.ns.name}`;
      const waves = await env.repo('waves', {
        'job.yaml': job('migrate', 0, nodeLabel),
        'cm.yaml': configMap('after-migrate', { 'convoy.dev/sync-wave': '1' }),
      });
      await env.createRelease('waves', { source: { git: { url: waves.url, ref: { branch: 'main' } } } });

      // The status history: each distinct status.lastAttempted.attemptedAt, polled every 200 ms.
      const attempts: string[] = [];
      let polling = true;
      const poller = (async () => {
        while (polling) {
          const seen = (await env.getRelease('waves')).status?.lastAttempted?.attemptedAt;
          if (seen !== undefined && seen !== attempts.at(-1)) attempts.push(seen);
          await sleep(200);
        }
      })();
      try {
        const waiting = await releaseWhen(
          'waves',
          'Applied is WaitingForWaveHealth',
          (r) => appliedOf(r)?.reason === 'WaitingForWaveHealth',
        );
        expect(appliedOf(waiting)?.status).toBe('False');
        expect(waiting.status?.waves).toMatchObject([
          { wave: 0, state: 'Applied' },
          { wave: 1, state: 'Pending' },
        ]);

        const requeued = () => env.recordLines('waves', { msg: 'requeued' });
        // Safety net only: three runs take the first run plus two waits of 10 s.
        const rechecks = await until(
          'three runs of the waiting wave, each ended and seen in status',
          () =>
            runs('waves').length >= 3 && requeued().length >= 3 && attempts.length >= 3
              ? runs('waves')
              : undefined,
          { timeoutMs: 75_000 },
        );
        // One message carries the whole wait: its ApproximateReceiveCount grows by one per recheck.
        const messageId = rechecks[0]['messageId'] as string;
        expect(new Set(rechecks.map((l) => l['messageId'])).size).toBe(1);
        expect(rechecks.map((l) => l['receiveCount'])).toEqual([1, 2, 3]);
        // Every recheck asked for the rollout recheck delay of 10 s, longer than the queue's own
        // visibility timeout, so only the runtime's visibility change can have held it that long.
        const requeues = requeued().filter((l) => l['messageId'] === messageId);
        for (const r of requeues) {
          expect(r['delayMs']).toBe(10_000);
          expect(r['visibilitySeconds']).toBe(10);
        }
        expect(QUEUE_VISIBILITY_SECONDS).toBeLessThan(10);
        const held = expectHeldAsAsked(messageId, requeues);
        measured['waveHeldS'] = seconds(held);
        expect(held.length).toBeGreaterThanOrEqual(2);
        // Status history: one attempt per run, in order, none between two runs.
        expect(new Set(attempts).size).toBe(attempts.length);
        expect([...attempts].sort()).toEqual(attempts);
        expect(attempts.length).toBeLessThanOrEqual(runs('waves').length);

        // The Job completes: a Node gets the label its pod waits for, the scheduler places the pod,
        // KWOK runs it to exit 0 and the real Job controller marks the Job Complete.
        const node = inject('nodeNames')[0] ?? 'kwok-node-0';
        const core = env.kc.makeApiClient(CoreV1Api);
        const labelNode = (value: string | null) =>
          core.patchNode(
            { name: node, body: { metadata: { labels: { [nodeLabel]: value } } } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
        await labelNode('true');
        try {
          await until(
            'the Job controller marks the Job Complete',
            async () =>
              (
                await env.kc
                  .makeApiClient(BatchV1Api)
                  .readNamespacedJob({ name: 'migrate', namespace: env.ns.name })
              ).status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'),
            { timeoutMs: 60_000 },
          );
        } finally {
          await labelNode(null);
        }
        const completedAt = Date.now();
        // Safety net only: the next recheck is at most 10 s away.
        const applied = await releaseWhen(
          'waves',
          'Applied is True',
          (r) => appliedOf(r)?.status === 'True',
          40_000,
        );
        expect(applied.status?.waves).toMatchObject([{ wave: 0, state: 'Healthy' }, { wave: 1 }]);
        await env.kc
          .makeApiClient(CoreV1Api)
          .readNamespacedConfigMap({ namespace: env.ns.name, name: 'after-migrate' });
        const done = await until(
          'the waiting message is acknowledged',
          () => env.recordLines('waves', { msg: 'done' })[0],
        );
        expect(done['messageId']).toBe(messageId);
        expect(done['receiveCount']).toBeGreaterThanOrEqual(4);
        // The first recheck that could see the Job Complete applied the next wave: at most one
        // delivery came after the Job was seen Complete (none, if the run in flight saw it first).
        const after = queue.deliveries(messageId).filter((d) => d.receivedAt > completedAt);
        expect(after.length).toBeLessThanOrEqual(1);
        expect(after.at(-1)?.receiveCount ?? done['receiveCount']).toBe(done['receiveCount']);
        measured['waveDeliveriesAfterJobComplete'] = after.length;
      } finally {
        polling = false;
        await poller;
      }
    },
  );

  it(
    'a retryable failure backs off per retryBackoff: 2 s, 4 s, 8 s, each held by the queue at least that long',
    { timeout: 120_000 },
    async () => {
      await env.createRelease('backoff', {
        source: { git: { url: appUrl, ref: { branch: 'no-such-branch' } } },
        syncPolicy: { retryBackoff: { initial: '2s', factor: 2, max: '8s' } },
      });
      try {
        // A run logs 'reconciled' (after its status write) and then its outcome line; wait for both.
        // Safety net only: four attempts take 2 + 4 + 8 s of waits plus their runs.
        const retried = () => env.recordLines('backoff', { msg: 'failed; retrying with backoff' });
        await until('four attempts', () => runs('backoff').length >= 4 && retried().length >= 4, {
          timeoutMs: 60_000,
        });
        const attempts = runs('backoff').slice(0, 4);
        expect(attempts.map((l) => l['receiveCount'])).toEqual([1, 2, 3, 4]);
        const messageId = attempts[0]['messageId'] as string;
        expect(new Set(attempts.map((l) => l['messageId']))).toEqual(new Set([messageId]));
        const retries = retried().slice(0, 4);
        expect(retries.map((l) => l['visibilitySeconds'])).toEqual([2, 4, 8, 8]);
        // The queue held each redelivery at least the backoff asked (how much longer: bench queueCadence).
        const held = expectHeldAsAsked(messageId, retries.slice(0, 3));
        measured['backoffHeldS'] = seconds(held);
        expect(held).toHaveLength(3);
        const release = await env.getRelease('backoff');
        expect(appliedOf(release)).toMatchObject({ status: 'False', reason: 'SourceNotReady' });
        expect(release.status?.lastAttempted?.phase).toBe('Failed');
      } finally {
        await env.deleteRelease('backoff');
      }
    },
  );
});

describe('messages that end without a run', () => {
  // A runtime of its own: maxReceiveCount 1 and a 2 s visibility timeout, so a record that is
  // reported as failed without a new visibility is in the dead-letter queue after ~2 s — and one
  // that was acknowledged never is.
  let env: RuntimeEnv;
  let appUrl: string;

  beforeAll(async () => {
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'queue-dlq', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 2,
      maxReceiveCount: 1,
      pollerConcurrency: 1,
    });
    appUrl = (await env.repo('apps', { 'app/cm.yaml': configMap('app-config') })).url;
  });

  afterAll(async () => {
    await env?.close();
  });

  it('malformed messages end in the DLQ while the rest of their batch succeeds; messages for a deleted Release or a wrong uid are dropped', async () => {
    const spec = { source: { git: { url: appUrl, ref: { branch: 'main' }, path: 'app' } } };
    const live = await env.createRelease('live', spec);
    const gone = await env.createRelease('gone', spec);
    const appliedTrue = (r: Awaited<ReturnType<RuntimeEnv['getRelease']>>) => appliedOf(r)?.status === 'True';
    await until(
      'both Releases are Applied',
      async () => appliedTrue(await env.getRelease('live')) && appliedTrue(await env.getRelease('gone')),
    );
    await env.deleteRelease('gone');
    // The relay's own message for the deletion is dropped too.
    await until(
      'the deletion message is dropped',
      () => env.recordLines('gone', { msg: 'dropped' }).length > 0,
    );

    const bodies = [
      'this is not JSON {',
      JSON.stringify({ ...JSON.parse(env.messageBody('live', live.metadata.uid!, 'test: v2')), v: 2 }),
      env.messageBody('live', live.metadata.uid!, 'test: valid'),
      env.messageBody('gone', gone.metadata.uid!, 'test: deleted Release'),
      env.messageBody('live', 'not-the-uid', 'test: wrong uid'),
    ];
    const [notJson, v2, valid, deleted, wrongUid] = await env.sendRaw('reconcile', bodies);
    const invalid = 'invalid message moved to the dead-letter queue';
    // The line that ends a record: its outcome, or the note that it was left for the DLQ.
    const line = (id: string | undefined, msg: string) =>
      env.logs.find(
        (l) => l['messageId'] === id && l.msg === msg && (l['outcome'] !== undefined || l.msg === invalid),
      );

    await until('every record of the batch was handled', () =>
      [notJson, v2, valid, deleted, wrongUid].every((id) =>
        env.logs.some((l) => l['messageId'] === id && (l['outcome'] !== undefined || l.msg === invalid)),
      ),
    );
    expect(line(valid, 'done')).toMatchObject({ cause: 'test: valid', receiveCount: 1 });
    expect(String(line(deleted, 'dropped')?.['reason'])).toMatch(/no longer exists|does not exist/);
    expect(String(line(wrongUid, 'dropped')?.['reason'])).toContain('not-the-uid');
    expect(String(line(notJson, invalid)?.['reason'])).toContain('not JSON');
    expect(String(line(v2, invalid)?.['reason'])).toContain('v:');

    const dead: Message[] = [];
    await until(
      'both malformed messages are in the DLQ',
      async () => {
        dead.push(...(await env.dlqMessages('reconcile')));
        return dead.length >= 2;
      },
      { timeoutMs: 10_000, intervalMs: 250 },
    );
    // Copied at the first receive: the copy names the original (adapters/sqs/dead-letter.ts).
    expect(
      dead.map((m) => m.MessageAttributes?.[DeadLetterAttribute.sourceMessageId]?.StringValue).sort(),
    ).toEqual([notJson, v2].sort());
    for (const id of [notJson, v2])
      expect(env.logs.filter((l) => l['messageId'] === id).map((l) => [l.msg, l['receiveCount']])).toEqual([
        [invalid, 1],
      ]);
    expect(dead.map((m) => m.Body).sort()).toEqual([bodies[0], bodies[1]].sort());

    // Acknowledged means deleted: nothing of the batch is left, in flight or waiting, and no
    // handler or poller failure was logged.
    await sleep(2_500);
    expect(await env.queueDepth('reconcile')).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect(await env.dlqMessages('reconcile')).toEqual([]);
    // One outcome line per delivery: each was received once.
    for (const id of [valid, deleted, wrongUid])
      expect(env.logs.filter((l) => l['messageId'] === id && l['outcome'] !== undefined)).toHaveLength(1);
    expect(
      env.logs.filter((l) => l.level === 'error' && (l['fn'] === 'reconcile' || l['poller'] === 'reconcile')),
    ).toEqual([]);
    // The runtime keeps working after the batch: a spec change still reconciles.
    await env.api.patchMerge('Release', env.ns.name, 'live', { spec: { syncPolicy: { interval: '6m' } } });
    await until(
      'the spec change is applied',
      async () => appliedOf(await env.getRelease('live'))?.observedGeneration === 2,
    );
    // The deleted Release leaves no Lease behind.
    expect(await env.lease(gone.metadata.uid!)).toBeUndefined();
  });
});
