// The fault suite's world: one real control plane (kube-apiserver, etcd, controllers, KWOK nodes),
// a git server over smart HTTP, fauxqs (SQS + S3), the relay in this process and the functions in
// child processes (functions-child.ts) that a scenario may kill -9, freeze or duplicate.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchV1Api, KubeConfig } from '@kubernetes/client-node';
import { startFauxqs } from 'fauxqs';
import { ensureQueueWithDlq } from '../../adapters/sqs/queues.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { Loop } from '../../domain/runtime/queue-message.ts';
import { installCrds, startControlPlane, type ControlPlane } from '../../dev/control-plane.ts';
import { startGitHttpServer, type GitHttpServer } from '../../dev/git-http-server.ts';
import { createLogger } from '../../platform/logger.ts';
import { startRelay, type Relay } from '../../relay/relay.ts';
import { createRepo } from '../harness/git-fixtures.ts';
import { convoyApi } from '../harness/releases.ts';
import type { ChildConfig } from './functions-child.ts';
import { duplicating } from './duplicating-sqs.ts';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';

export const LOOPS: readonly Loop[] = ['reconcile', 'drift', 'health'];

export interface LogLine {
  readonly time: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

export interface FaultWorld {
  cp: ControlPlane;
  kc: KubeConfig;
  api: ReturnType<typeof convoyApi>;
  git: GitHttpServer;
  gitRoot: string;
  sqs: SQSClient;
  queues: Record<Loop, { queueUrl: string; queueArn: string; dlqUrl: string }>;
  endpoint: string;
  bucket: string;
  /** The installation's hint key, shared by every functions process as the construct's secret shares it on AWS. */
  hintKey: string;
  stop(): Promise<void>;
}

/**
 * `pods`: the most Pods one scenario runs. A simulated Node holds 110 Pods (as a kubelet's
 * default), so a burst of 500 Deployments needs more than the default 2 Nodes; scenarios delete
 * their namespace when they finish (deleteNamespace), so the Pods of one do not crowd the next.
 */
export async function startWorld(options: { pods?: number } = {}): Promise<FaultWorld> {
  const nodes = Math.max(2, Math.ceil(((options.pods ?? 0) * 1.5) / 110) + 1);
  const cp = await startControlPlane({ nodes });
  await installCrds(cp.kubeconfigPath);
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const gitRoot = await mkdtemp(join(tmpdir(), 'convoy-faults-git-'));
  const git = await startGitHttpServer({ projectRoot: gitRoot });
  const aws = await startFauxqs({ port: 0, logger: false });
  const endpoint = `http://127.0.0.1:${aws.port}`;
  const credentials = { accessKeyId: 'convoy-dev', secretAccessKey: 'convoy-dev' };
  const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials });
  const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  const bucket = 'convoy-renders';
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    cp,
    kc,
    api: convoyApi(kc),
    git,
    gitRoot,
    sqs,
    queues: {} as FaultWorld['queues'],
    endpoint,
    bucket,
    hintKey: randomBytes(32).toString('base64url'),
    async stop() {
      await git.stop().catch(() => undefined);
      await aws.stop();
      sqs.destroy();
      s3.destroy();
      await cp.stop();
      await rm(gitRoot, { recursive: true, force: true });
    },
  };
}

/** Fresh queues (names carry the scenario) so scenarios never see each other's messages. */
export async function freshQueues(world: FaultWorld, scenario: string): Promise<void> {
  for (const loop of LOOPS) {
    world.queues[loop] = await ensureQueueWithDlq(world.sqs, `${scenario}-${loop}`, {
      maxReceiveCount: 100,
      visibilityTimeout: 60,
    });
  }
}

export interface Functions {
  readonly pid: number;
  kill(signal: NodeJS.Signals): void;
  exited: Promise<void>;
}

/** Starts the three functions' pollers in a child process; every log line goes to `logs`. */
export async function startFunctions(
  world: FaultWorld,
  namespace: string,
  logs: LogLine[],
  options: { duplicate?: boolean } = {},
): Promise<Functions> {
  const cacheDir = await mkdtemp(join(tmpdir(), 'convoy-faults-cache-'));
  const config: ChildConfig = {
    kubeconfigPath: world.cp.kubeconfigPath,
    endpoint: world.endpoint,
    namespace,
    bucket: world.bucket,
    cacheDir,
    queues: world.queues,
    duplicate: options.duplicate === true,
    egressAllow: new URL(world.git.url).host,
  };
  const child: ChildProcess = spawn(process.execPath, [join(import.meta.dirname, 'functions-child.ts')], {
    env: { ...process.env, FAULT_CHILD: JSON.stringify(config), CONVOY_HINT_KEY: world.hintKey },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as LogLine;
        if (parsed.msg === 'functions ready') resolve();
        logs.push(parsed);
      } catch {
        // not a log line
      }
    });
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await ready;
  return {
    pid: child.pid ?? 0,
    kill: (signal) => child.kill(signal),
    exited: exited.then(() => rm(cacheDir, { recursive: true, force: true })),
  };
}

export function startScenarioRelay(
  world: FaultWorld,
  installation: string,
  namespaces: readonly string[],
  options: { duplicate?: boolean; identity?: string } = {},
): Relay {
  const sqs = options.duplicate === true ? duplicating(world.sqs) : world.sqs;
  return startRelay({
    kube: fromClientNodeKubeConfig(world.kc),
    sqs: onlyNamespaces(sqs, namespaces),
    queueUrls: {
      reconcile: world.queues.reconcile.queueUrl,
      drift: world.queues.drift.queueUrl,
      health: world.queues.health.queueUrl,
    },
    installationNamespace: installation,
    logger: createLogger({ level: 'error' }),
    tickMs: 500,
    ...(options.identity === undefined ? {} : { identity: options.identity }),
  });
}

/** Only this scenario's Releases reach its queues (the relay watches the whole cluster). */
function onlyNamespaces(sqs: SQSClient, namespaces: readonly string[]): SQSClient {
  const send = sqs.send.bind(sqs) as (command: unknown) => Promise<unknown>;
  const wanted = (body: string | undefined) => {
    try {
      return namespaces.includes((JSON.parse(body ?? '{}') as { namespace?: string }).namespace ?? '');
    } catch {
      return false;
    }
  };
  return new Proxy(sqs, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver) as unknown;
      return async (command: { input?: { Entries?: { MessageBody?: string }[] } }) => {
        const entries = command.input?.Entries;
        if (entries !== undefined) {
          const kept = entries.filter((e) => wanted(e.MessageBody));
          if (kept.length === 0) return { Successful: [], Failed: [] };
          command.input!.Entries = kept;
        }
        return send(command);
      };
    },
  });
}

/** Deletes a scenario's namespace without waiting (the namespace controller removes its objects). */
export async function deleteNamespace(world: FaultWorld, name: string): Promise<void> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  await world.kc.makeApiClient(CoreV1Api).deleteNamespace({ name });
}

export async function createNamespace(world: FaultWorld, name: string): Promise<void> {
  const { CoreV1Api } = await import('@kubernetes/client-node');
  await world.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name } } });
}

/**
 * A two-wave app per Release (its own directory, its own object names): wave 0 a Deployment
 * (KWOK runs its Pod) and a ConfigMap, wave 1 a ConfigMap.
 */
export async function appRepo(
  world: FaultWorld,
  name: string,
  releases: readonly string[],
  options: { configMapsOnly?: boolean } = {},
): Promise<string> {
  const files: Record<string, string> = {};
  for (const r of releases) {
    if (options.configMapsOnly !== true)
      files[`${r}/deploy.yaml`] =
        `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${r}-web, annotations: {convoy.dev/sync-wave: "0"}}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: ${r}-web}}\n  template:\n    metadata: {labels: {app: ${r}-web}}\n    spec: {containers: [{name: main, image: "registry.invalid/web:1"}]}\n`;
    files[`${r}/cm.yaml`] =
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${r}-config, annotations: {convoy.dev/sync-wave: "0"}}\ndata: {a: "1"}\n`;
    files[`${r}/after.yaml`] =
      `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${r}-after, annotations: {convoy.dev/sync-wave: "1"}}\ndata: {b: "2"}\n`;
  }
  await createRepo(world.gitRoot, name, files);
  return `${world.git.url}/${name}.git`;
}

export function releaseSpec(url: string, namespace: string, name: string): Record<string, unknown> {
  return {
    cluster: { name: 'local' },
    targetNamespace: namespace,
    source: { git: { url, ref: { branch: 'main' }, path: name } },
    healthAssessment: { interval: '30s' },
    driftDetection: { interval: '30s' },
  };
}

export const conditionOf = (r: Release, type: string) => r.status?.conditions?.find((c) => c.type === type);

export function converged(r: Release): boolean {
  return (
    conditionOf(r, 'Applied')?.status === 'True' &&
    r.status?.lastAttempted?.renderRef !== undefined &&
    r.status.lastAttempted.renderRef === r.status.lastSuccessful?.renderRef &&
    conditionOf(r, 'InSync')?.status === 'True' &&
    conditionOf(r, 'Healthy')?.status === 'True'
  );
}

/** Fields a converged Release must carry; each missing one counts as lost. */
export function missingFields(r: Release): string[] {
  const s = r.status;
  const wanted: [string, unknown][] = [
    ['Applied', conditionOf(r, 'Applied')],
    ['InSync', conditionOf(r, 'InSync')],
    ['Healthy', conditionOf(r, 'Healthy')],
    ['lastAttempted', s?.lastAttempted],
    ['lastSuccessful', s?.lastSuccessful],
    ['observedGeneration', s?.observedGeneration],
    ['healthSummary', s?.healthSummary],
    ['reconciledAt', s?.reconciledAt],
  ];
  return wanted.filter(([, v]) => v === undefined).map(([k]) => k);
}

export async function waitConverged(
  world: FaultWorld,
  namespace: string,
  names: readonly string[],
  timeoutMs: number,
): Promise<{ ms: number; converged: number }> {
  const started = Date.now();
  let done = 0;
  while (Date.now() - started < timeoutMs) {
    const list: unknown = await world.api.raw.listNamespacedCustomObject({
      group: 'convoy.dev',
      version: 'v1alpha1',
      namespace,
      plural: 'releases',
    });
    const items = (list as { items: Release[] }).items;
    done = items.filter(converged).length;
    if (done >= names.length) return { ms: Date.now() - started, converged: done };
    await sleep(500);
  }
  return { ms: Date.now() - started, converged: done };
}

export async function deadLettered(world: FaultWorld): Promise<number> {
  let total = 0;
  for (const loop of LOOPS) {
    const { Attributes = {} } = await world.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: world.queues[loop].dlqUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    total +=
      Number(Attributes['ApproximateNumberOfMessages'] ?? 0) +
      Number(Attributes['ApproximateNumberOfMessagesNotVisible'] ?? 0);
  }
  return total;
}

const FULL_RUN_MSGS = new Set([
  'done',
  'stopped until the next interval or change',
  'failed; retrying with backoff',
  'record handler threw; retrying with backoff',
]);

/** An outcome line of a run that did the loop's work (not a Lease wait or a drop). */
export function isFullRun(line: LogLine): boolean {
  if (line['outcome'] === undefined || line['namespace'] === undefined) return false;
  if (FULL_RUN_MSGS.has(line.msg)) return true;
  return line.msg === 'requeued' && !String(line['reason']).startsWith('lease held by');
}

/**
 * When a run held its Lease: the guard's `leaseHeldFrom` (the take's answer) to `leaseHeldUntil`
 * (the request that gave it back was sent), both on one clock. A run's outcome line is logged
 * after that request's answer and its effects, so the line's time would end the run too late: a
 * next run legitimately taking the Lease in between would count as an overlap.
 */
function heldInterval(line: LogLine): [number, number] {
  const from = line['leaseHeldFrom'];
  const until = line['leaseHeldUntil'];
  if (typeof from === 'number' && typeof until === 'number') return [from, until];
  // A run without a Lease mark (no guard): its whole handling, from the outcome line back.
  const end = Date.parse(line.time);
  return [end - Number(line['durationMs'] ?? 0), end];
}

/** Runs per Release and loop, and how many pairs of runs of one Release and loop held their Lease at once. */
export function runStats(
  logs: readonly LogLine[],
  releases: number,
): { runsPerRelease: Record<Loop, number>; overlappingRuns: number } {
  const byKey = new Map<string, [number, number][]>();
  const counts: Record<Loop, number> = { reconcile: 0, drift: 0, health: 0 };
  for (const line of logs.filter(isFullRun)) {
    const loop = line['loop'] as Loop;
    counts[loop]++;
    const key = `${loop}/${String(line['namespace'])}/${String(line['name'])}`;
    const list = byKey.get(key) ?? [];
    list.push(heldInterval(line));
    byKey.set(key, list);
  }
  let overlapping = 0;
  for (const intervals of byKey.values()) {
    intervals.sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < intervals.length; i++) if (intervals[i][0] < intervals[i - 1][1]) overlapping++;
  }
  const per = (n: number) => Math.round((n / Math.max(releases, 1)) * 100) / 100;
  return {
    runsPerRelease: {
      reconcile: per(counts.reconcile),
      drift: per(counts.drift),
      health: per(counts.health),
    },
    overlappingRuns: overlapping,
  };
}

/**
 * Every Job created in a namespace while a scenario runs, by uid: a hook Job created more than once
 * (a second Job of the same name after the first was deleted, i.e. the hook ran twice) counts as a
 * duplicate. Polls the list (a Job that lives less than the poll interval could be missed; hook Jobs
 * here live until the namespace goes).
 */
export function trackJobs(world: FaultWorld, namespace: string, everyMs = 500) {
  const batch = world.kc.makeApiClient(BatchV1Api);
  const uidsByName = new Map<string, Set<string>>();
  const poll = async () => {
    const jobs = await batch.listNamespacedJob({ namespace });
    for (const job of jobs.items) {
      const name = job.metadata?.name ?? '';
      const uids = uidsByName.get(name) ?? new Set<string>();
      uids.add(job.metadata?.uid ?? '');
      uidsByName.set(name, uids);
    }
  };
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await poll().catch(() => undefined);
      await sleep(everyMs);
    }
  })();
  return {
    async stop(): Promise<{ hookJobs: number; duplicateHookJobs: number }> {
      stopped = true;
      await loop;
      await poll();
      const created = [...uidsByName.values()].reduce((n, uids) => n + uids.size, 0);
      return { hookJobs: uidsByName.size, duplicateHookJobs: created - uidsByName.size };
    },
  };
}

/** The host's 1-minute load average, sampled every `everyMs` while a scenario runs. */
export function sampleLoad(everyMs = 5_000) {
  const samples: number[] = [loadavg()[0] ?? 0];
  const timer = setInterval(() => samples.push(loadavg()[0] ?? 0), everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      samples.push(loadavg()[0] ?? 0);
      const round = (n: number) => Math.round(n * 10) / 10;
      return {
        loadAvg1m: {
          start: round(samples[0] ?? 0),
          max: round(Math.max(...samples)),
          end: round(samples.at(-1) ?? 0),
        },
        cores: cpus().length,
      };
    },
  };
}
