// queueCadence: the speeds the integration tests no longer assert as wall-clock gaps.
// The tests check causes (a recheck asked for 10 s of visibility; the queue held it at least
// that long; every label update is counted in one message, sent at least 1 s apart); how soon
// things really happen depends on the machine, so it is measured here, with its target:
// - waveRecheck: a wave waiting on a Job that cannot start is rechecked through SQS visibility
//   (test/integration/queue-e2e.test.ts): per redelivery, the visibility asked and how long the
//   queue really held the message (from the ChangeMessageVisibility request to the delivery,
//   test/harness/queue-tap.ts); then a Node is labelled, the Job completes and the next recheck
//   applies the next wave: Job Complete (seen by the bench) → Applied True (seen by the bench).
// - retryBackoff: a missing branch with retryBackoff 2s ×2 up to 8s: the same per redelivery.
// - relayBurst: 200 label updates of one Release (10 × 20 at once, test/integration/relay.test.ts):
//   how many reconcile messages the relay made of them, against the burst's length.
// Targets: every redelivery within 1 s of what it asked ("a recheck every 10 s", "2 s, 4 s, 8 s");
// Job Complete → Applied ≤ 12 s; the burst ≤ one message per started second of it + 2, and < 20.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BatchV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { startGitHttpServer } from '../../dev/git-http-server.ts';
import { startConvoyRuntime, type ConvoyRuntime } from '../../dev/runtime.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import { createLogger } from '../../platform/logger.ts';
import { createRepo, type FixtureFiles } from '../../test/harness/git-fixtures.ts';
import { freshNamespace, type FreshNamespace } from '../../test/harness/kube.ts';
import { tapQueue, type QueueTap } from '../../test/harness/queue-tap.ts';
import { convoyApi } from '../../test/harness/releases.ts';
import { percentile } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';

const TARGETS = {
  overshootMaxMs: 1_000,
  jobCompleteToAppliedMs: 12_000,
  burstMessagesOverSeconds: 2,
  burstMessagesBelow: 20,
};

const configMap = (name: string, annotations: Record<string, string> = {}) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  annotations: ${JSON.stringify(annotations)}\ndata: {k: v}\n`;

/** A Job whose pod waits for a Node labelled `nodeLabel: "true"`. */
const job = (name: string, nodeLabel: string) =>
  `apiVersion: batch/v1\nkind: Job\nmetadata: {name: ${name}, annotations: {convoy.dev/sync-wave: "0"}}\n` +
  `spec: {template: {spec: {restartPolicy: Never, nodeSelector: {${nodeLabel}: "true"}, containers: [{name: m, image: busybox}]}}}\n`;

type LogLine = Readonly<Record<string, unknown>>;

/** The `convoy dev` runtime on one namespace of the bench's cluster, as the queue-e2e test runs it (test/harness/runtime-env.ts needs vitest). */
interface Env {
  readonly kc: KubeConfig;
  readonly ns: FreshNamespace;
  readonly runtime: ConvoyRuntime;
  repo(name: string, files: FixtureFiles): Promise<{ url: string }>;
  createRelease(name: string, spec: Record<string, unknown>): Promise<void>;
  getRelease(name: string): Promise<Release>;
  patchLabels(name: string, labels: Record<string, string>): Promise<void>;
  deleteRelease(name: string): Promise<void>;
  /** The reconcile loop's record lines of a Release, optionally of one message kind. */
  recordLines(name: string, msg?: string): LogLine[];
  close(): Promise<void>;
}

async function startEnv(kc: KubeConfig): Promise<Env> {
  const ns = await freshNamespace(kc, 'bench-cadence');
  const installation = await freshNamespace(kc, 'bench-cadence-system');
  const gitRoot = await mkdtemp(join(tmpdir(), 'convoy-bench-cadence-'));
  const git = await startGitHttpServer({ projectRoot: gitRoot });
  const api = convoyApi(kc);
  await api.create('Cluster', ns.name, 'local', { inCluster: true });
  const logs: LogLine[] = [];
  const logger = createLogger({
    level: 'info',
    write: (line) => void logs.push(JSON.parse(line) as LogLine),
  });
  // As the integration test runs it: one batch at a time, a 5-s queue visibility timeout.
  const runtime = await startConvoyRuntime({
    kc,
    logger,
    namespace: installation.name,
    onlyNamespaces: [ns.name],
    relayTickMs: 200,
    visibilityTimeoutSeconds: 5,
    pollerConcurrency: 1,
  });
  await waitFor('the relay leads and has listed', () => runtime.relay.ready() && runtime.relay.leading());
  return {
    kc,
    ns,
    runtime,
    async repo(name, files) {
      await createRepo(gitRoot, name, files);
      return { url: `${git.url}/${name}.git` };
    },
    async createRelease(name, spec) {
      await api.create('Release', ns.name, name, {
        cluster: { name: 'local' },
        targetNamespace: ns.name,
        ...spec,
      });
    },
    getRelease: (name) => api.getRelease(ns.name, name),
    async patchLabels(name, labels) {
      await api.patchMerge('Release', ns.name, name, { metadata: { labels } });
    },
    async deleteRelease(name) {
      await api.raw.deleteNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: ns.name,
        plural: 'releases',
        name,
      });
    },
    recordLines: (name, msg) =>
      logs.filter(
        (l) =>
          l['namespace'] === ns.name &&
          l['name'] === name &&
          l['messageId'] !== undefined &&
          l['loop'] === 'reconcile' &&
          (msg === undefined || l['msg'] === msg),
      ),
    async close() {
      await runtime.stop();
      await git.stop();
      await ns.delete();
      await installation.delete();
      await rm(gitRoot, { recursive: true, force: true });
    },
  };
}

/** Polls `check` until it returns something other than undefined/false; throws after timeoutMs. */
async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`queueCadence: timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(100);
  }
}

const appliedTrue = (r: Release) =>
  r.status?.conditions?.some((c) => c.type === 'Applied' && c.status === 'True') === true;

interface Holds {
  askedS: number[];
  heldMs: number[];
  overshootMs: { p50: number | undefined; max: number | undefined };
}

/** The first `count` redeliveries that followed a visibility change, over the messages of `lines` (a wait may move to a new message). */
function holdsOf(queue: QueueTap, lines: readonly LogLine[], count: number): Holds {
  const ids = [...new Set(lines.map((l) => String(l['messageId'])))];
  const holds = ids.flatMap((id) => queue.holds(id).filter((h) => h.askedSeconds.length > 0)).slice(0, count);
  const askedS = holds.map((h) => h.askedSeconds.at(-1) ?? Number.NaN);
  const heldMs = holds.map((h) => Math.round(h.heldMs));
  const over = heldMs.map((held, i) => held - (askedS[i] ?? Number.NaN) * 1000);
  return { askedS, heldMs, overshootMs: { p50: percentile(over, 50), max: percentile(over, 100) } };
}

async function waveRecheck(
  env: Env,
  queue: QueueTap,
  node: string,
): Promise<Holds & { jobCompleteToAppliedMs: number }> {
  const nodeLabel = `convoy.bench/${env.ns.name}`;
  const repo = await env.repo('waves', {
    'job.yaml': job('migrate', nodeLabel),
    'cm.yaml': configMap('after-migrate', { 'convoy.dev/sync-wave': '1' }),
  });
  await env.createRelease('waves', { source: { git: { url: repo.url, ref: { branch: 'main' } } } });
  // Three redeliveries held by the visibility the rechecks asked.
  const requeued = () => env.recordLines('waves', 'requeued');
  await waitFor('three rechecks held by visibility', () => holdsOf(queue, requeued(), 3).heldMs.length >= 3);
  const holds = holdsOf(queue, requeued(), 3);

  const core = env.kc.makeApiClient(CoreV1Api);
  const labelNode = (value: string | null) =>
    core.patchNode(
      { name: node, body: { metadata: { labels: { [nodeLabel]: value } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  await labelNode('true');
  try {
    await waitFor('the Job is Complete', async () =>
      (
        await env.kc.makeApiClient(BatchV1Api).readNamespacedJob({ name: 'migrate', namespace: env.ns.name })
      ).status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'),
    );
  } finally {
    await labelNode(null);
  }
  const completedAt = Date.now();
  await waitFor('Applied is True', async () => appliedTrue(await env.getRelease('waves')));
  return { ...holds, jobCompleteToAppliedMs: Date.now() - completedAt };
}

async function retryBackoff(env: Env, queue: QueueTap, appUrl: string): Promise<Holds> {
  await env.createRelease('backoff', {
    source: { git: { url: appUrl, ref: { branch: 'no-such-branch' } } },
    syncPolicy: { retryBackoff: { initial: '2s', factor: 2, max: '8s' } },
  });
  const retried = () => env.recordLines('backoff', 'failed; retrying with backoff');
  await waitFor('three retries held by visibility', () => holdsOf(queue, retried(), 3).heldMs.length >= 3);
  await env.deleteRelease('backoff');
  return holdsOf(queue, retried(), 3);
}

async function relayBurst(
  env: Env,
  appUrl: string,
): Promise<{ updates: number; burstMs: number; messages: number }> {
  await env.createRelease('burst', {
    source: { git: { url: appUrl, ref: { branch: 'main' }, path: 'app' } },
  });
  await waitFor('the burst Release is Applied', async () => appliedTrue(await env.getRelease('burst')));
  const started = Date.now();
  for (let batch = 0; batch < 10; batch++) {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => env.patchLabels('burst', { n: String(batch * 20 + i) })),
    );
  }
  const burstMs = Date.now() - started;
  // A coalesced message names how many events it stands for: "<cause> (and N more events)".
  const burstMessages = () => {
    const ids = new Map<string, string>();
    for (const l of env.recordLines('burst'))
      if (String(l['cause']).startsWith('watch: labels changed'))
        ids.set(String(l['messageId']), String(l['cause']));
    return [...ids.values()];
  };
  const events = (causes: string[]) =>
    causes.reduce((sum, c) => sum + 1 + Number(/\(and (\d+) more events\)$/.exec(c)?.[1] ?? 0), 0);
  const messages = await waitFor('every update is in a message', () =>
    events(burstMessages()) >= 200 ? burstMessages() : undefined,
  );
  return { updates: 200, burstMs, messages: messages.length };
}

export async function benchQueueCadence(kc: KubeConfig): Promise<Record<string, unknown>> {
  const nodes = await kc.makeApiClient(CoreV1Api).listNode();
  const node = nodes.items[0]?.metadata?.name;
  if (node === undefined)
    throw new Error(
      'queueCadence: the bench cluster has no Node for the wave Job; it needs the embedded control plane with KWOK nodes',
    );
  const env = await startEnv(kc);
  const queue = tapQueue(env.runtime.sqs, env.runtime.queues.reconcile.queueUrl);
  try {
    const appUrl = (await env.repo('apps', { 'app/cm.yaml': configMap('app-config') })).url;
    log('queueCadence: a wave waiting for a Job');
    const wave = await waveRecheck(env, queue, node);
    log('queueCadence: retry backoff 2 s, 4 s, 8 s');
    const backoff = await retryBackoff(env, queue, appUrl);
    log('queueCadence: 200 label updates');
    const burst = await relayBurst(env, appUrl);
    const burstBound = Math.min(
      Math.ceil(burst.burstMs / 1000) + TARGETS.burstMessagesOverSeconds,
      TARGETS.burstMessagesBelow - 1,
    );
    const met =
      (wave.overshootMs.max ?? Infinity) <= TARGETS.overshootMaxMs &&
      (backoff.overshootMs.max ?? Infinity) <= TARGETS.overshootMaxMs &&
      wave.jobCompleteToAppliedMs <= TARGETS.jobCompleteToAppliedMs &&
      burst.messages <= burstBound;
    return {
      waveRecheck: wave,
      retryBackoff: backoff,
      relayBurst: { ...burst, bound: burstBound },
      targets: {
        overshootMaxMs: `every redelivery within ${TARGETS.overshootMaxMs} ms of the visibility it asked (wave recheck 10 s; backoff 2, 4, 8 s)`,
        jobCompleteToAppliedMs: TARGETS.jobCompleteToAppliedMs,
        relayBurst: `messages <= ceil(burst s) + ${TARGETS.burstMessagesOverSeconds} and < ${TARGETS.burstMessagesBelow}`,
      },
      met,
    };
  } finally {
    queue.stop();
    await env.close();
  }
}
