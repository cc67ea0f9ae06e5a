// relayScale: the relay with 10,000 Releases. The Releases are created with an
// up-to-date status (bench/lib/release-fleet.ts), so no function runs; the relay runs as in
// production (relay/main.ts, its own process, so /proc measures it alone) and sends to fauxqs
// queues, which the bench counts. Reports:
// - the relay's RSS after its first list and its peak, and its memory with 0, n/2 and n Releases
//   (RSS and V8 heap used, from a relay started on each): MB per 1,000 Releases (the target:
//   RSS <= 150 MB at 10,000, growing linearly; `rssPer1000Releases` = (RSS at n - RSS at 0) /
//   (n / 1,000), in MiB and MB, and the settled RSS in MB, the target's unit). The relay runs as the image runs it: compiled
//   (tsc -p tsconfig.build.json, to .convoy/bench-relay) with the image's Node.js flags and
//   malloc environment (image/relay-node-flags.ts); `memory.fromSources` repeats the points for relay/main.ts run
//   from its .ts sources without the flags, as this section measured it before;
// - the message burst of a start, a restart with 1,000 Releases not up to date, and a restart
//   with every Release up to date (messages per loop within 1, 5, 10 and 30 s of ready);
// - the watch-event → message lag (p50/p99) under a burst of 1,000 spec changes: the bench's
//   own watch sees each change; the lag runs to the message's sentAt (relay-spec-burst.ts).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetQueueAttributesCommand, PurgeQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { startFauxqs } from 'fauxqs';
import { freePorts } from '../../dev/control-plane/processes.ts';
import { ensureQueueWithDlq } from '../../adapters/sqs/queues.ts';
import { LOOPS, type Loop } from '../../domain/runtime/queue-message.ts';
import { inPool, startSideProcess, waitUntil, type SideProcess } from '../flux/side-process.ts';
import { createFleet, upToDateStatus, writeStatus } from '../lib/release-fleet.ts';
import { rssMiB } from '../lib/proc-stats.ts';
import { RELAY_MALLOC_ENV, RELAY_NODE_FLAGS } from '../../image/relay-node-flags.ts';
import { log } from '../lib/stdout.ts';
import { specChangeBurst } from './relay-spec-burst.ts';

const NAMESPACE = 'convoy-relay-scale';
const BURST_WINDOWS_S = [1, 5, 10, 30] as const;
/** The targets: RSS <= 150 MB (10^6 bytes: 143.1 MiB) at 10,000 Releases, a message within 1 s (p99) of a spec change. */
const TARGET_RSS_MB_AT_10K = 150;
const TARGET_LAG_P99_MS = 1_000;

/** One reading of the relay's memory: what it holds, RSS and V8 heap used (its own metric). */
interface MemoryPoint {
  releases: number;
  rssMiB: number;
  heapUsedMiB: number;
  /** The same 5 s later (the list's garbage collected). */
  settled: { rssMiB: number; heapUsedMiB: number };
}

const metricValue = (text: string, name: string): number =>
  Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text)?.[1] ?? 'NaN');
const mib = (bytes: number): number => Math.round((bytes / (1024 * 1024)) * 10) / 10;
/** MiB as MB (10^6 bytes), one decimal: the target's unit. */
const mbOf = (mebibytes: number): number => Math.round(mebibytes * 1.048576 * 10) / 10;

/** How the relay process is started: the compiled relay with the image's flags, or its .ts sources as they are. */
interface RelayCommand {
  readonly label: string;
  readonly args: readonly string[];
  /** Environment the image sets for the process (RELAY_MALLOC_ENV). */
  readonly env?: Readonly<Record<string, string>>;
}

/** The relay as the image runs it: the package's JavaScript (tsc -p tsconfig.build.json) under .convoy/bench-relay, whose imports resolve to this checkout's node_modules. */
async function compileRelay(root: string): Promise<RelayCommand> {
  const work = join(root, '.convoy', 'bench-relay');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const main = join(work, 'dist', 'relay', 'main.js');
  // tsc emits even when a file elsewhere in the checkout does not typecheck; the relay's own JavaScript is what counts here.
  const compiled = await promisify(execFile)(
    process.execPath,
    [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', join(work, 'dist'), '--declaration', 'false'],
    { cwd: root, maxBuffer: 64 << 20 },
  ).catch((error: unknown) => error as { stdout?: string });
  if (!existsSync(main))
    throw new Error(
      `tsc -p tsconfig.build.json emitted no relay/main.js: ${compiled.stdout?.slice(0, 2000) ?? ''}`,
    );
  await cp(join(root, 'package.json'), join(work, 'package.json'));
  const env = Object.entries(RELAY_MALLOC_ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return {
    label: `compiled, ${env} node ${RELAY_NODE_FLAGS.join(' ')}`,
    args: [...RELAY_NODE_FLAGS, main],
    env: RELAY_MALLOC_ENV,
  };
}

export async function benchRelayScale(
  kc: KubeConfig,
  root: string,
  dir: string,
  options: { releases: number; changes: number },
): Promise<Record<string, unknown>> {
  const aws = await startFauxqs({ port: 0, logger: false });
  const endpoint = `http://127.0.0.1:${aws.port}`;
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } }).catch(() => undefined);
  const queues = {} as Record<Loop, string>;
  for (const loop of LOOPS)
    queues[loop] = (
      await ensureQueueWithDlq(sqs, `scale-${loop}`, { maxReceiveCount: 100, visibilityTimeout: 60 })
    ).queueUrl;
  let relay: SideProcess | undefined;
  const run = Date.now().toString(36);
  log('relayScale: compiling the relay as the image ships it (tsc -p tsconfig.build.json)');
  const compiled = await compileRelay(root);
  const fromSources: RelayCommand = {
    label: 'relay/main.ts from its sources, no flags',
    args: [join(root, 'relay', 'main.ts')],
  };
  try {
    const half = Math.floor(options.releases / 2);
    const fleetOf = (part: string, count: number) =>
      createFleet(kc, {
        prefix: `scale-${run}-${part}`,
        count,
        perNamespace: 100,
        concurrency: 16,
        repoUrl: 'http://127.0.0.1:9/app.git',
      });

    const depth = async (): Promise<Record<Loop, number>> => {
      const out = {} as Record<Loop, number>;
      for (const loop of LOOPS) {
        const a = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: queues[loop],
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        );
        out[loop] =
          Number(a.Attributes?.ApproximateNumberOfMessages ?? 0) +
          Number(a.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
      }
      return out;
    };
    const purge = async () => {
      for (const loop of LOOPS) await sqs.send(new PurgeQueueCommand({ QueueUrl: queues[loop] }));
    };
    const [port] = await freePorts(1);
    const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    /** A relay started on what the cluster holds now: its memory once ready, and 5 s later. */
    const memoryPoint = async (label: string, command: RelayCommand = compiled): Promise<MemoryPoint> => {
      const { pid } = await startRelayProcess(label, false, command);
      const read = async () => {
        const text = await scrape();
        return {
          releases: metricValue(text, 'convoy_relay_releases'),
          rssMiB: rssMiB(pid).rss,
          heapUsedMiB: mib(metricValue(text, 'convoy_relay_nodejs_heap_size_used_bytes')),
        };
      };
      const first = await read();
      await sleep(5_000);
      const later = await read();
      await stopRelay();
      return { ...first, settled: { rssMiB: later.rssMiB, heapUsedMiB: later.heapUsedMiB } };
    };
    const startRelayProcess = async (
      label: string,
      windows = true,
      command: RelayCommand = compiled,
    ): Promise<{
      pid: number;
      readyMs: number;
      burst: Record<string, Record<Loop, number>>;
      rssAfterListMiB: number;
    }> => {
      await purge();
      const t = performance.now();
      const proc = startSideProcess({
        name: `relay (${label})`,
        file: process.execPath,
        args: [...command.args, dir],
        env: {
          ...process.env,
          ...command.env,
          KUBECONFIG: join(dir, 'kubeconfig'),
          CONVOY_NAMESPACE: NAMESPACE,
          CONVOY_RECONCILE_QUEUE_URL: queues.reconcile,
          CONVOY_DRIFT_QUEUE_URL: queues.drift,
          CONVOY_HEALTH_QUEUE_URL: queues.health,
          CONVOY_HTTP_HOST: '127.0.0.1',
          CONVOY_HTTP_PORT: String(port),
          CONVOY_LOG_LEVEL: 'warn',
          AWS_ENDPOINT_URL: endpoint,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'bench',
          AWS_SECRET_ACCESS_KEY: 'bench',
        },
        log: join(dir, `relay-scale-${label}.log`),
        pidsFile: join(dir, 'pids'),
      });
      relay = proc;
      // Ready and leading: a replica that is not (yet) the leader answers /readyz too, as a follower.
      const leading = async () =>
        /^convoy_relay_leader(\{[^}]*\})? 1$/m.test(
          await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
        );
      await waitUntil(
        `the relay (${label}) ready and leading`,
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok && (await leading()),
        [proc],
        120_000,
      );
      const readyAt = performance.now();
      const rssAfterListMiB = rssMiB(proc.pid).rss;
      const burst: Record<string, Record<Loop, number>> = {};
      for (const s of windows ? BURST_WINDOWS_S : []) {
        await sleep(Math.max(0, readyAt + s * 1000 - performance.now()));
        burst[`within${s}s`] = await depth();
      }
      return { pid: proc.pid, readyMs: Math.round(readyAt - t), burst, rssAfterListMiB };
    };
    const stopRelay = async () => {
      await relay?.stop(15_000);
      relay = undefined;
    };

    log('relayScale: the relay with no Release of this section');
    const memory: MemoryPoint[] = [await memoryPoint('empty')];
    const sourceMemory: MemoryPoint[] = [await memoryPoint('empty-sources', fromSources)];
    log(
      `relayScale: creating ${options.releases} Releases with an up-to-date status (${half}, a relay started on them, then the rest)`,
    );
    const created = performance.now();
    const firstHalf = await fleetOf('a', half);
    let createMs = Math.round(performance.now() - created);
    memory.push(await memoryPoint('half'));
    sourceMemory.push(await memoryPoint('half-sources', fromSources));
    const createdRest = performance.now();
    const fleet = [...firstHalf, ...(await fleetOf('b', options.releases - half))];
    createMs += Math.round(performance.now() - createdRest);

    memory.push(await memoryPoint('full'));
    sourceMemory.push(await memoryPoint('full-sources', fromSources));
    log('relayScale: first start');
    const firstStart = await startRelayProcess('start');
    log('relayScale: spec-change burst');
    const lag = await specChangeBurst(kc, sqs, queues.reconcile, fleet.slice(0, options.changes));
    const relayPid = relay?.pid ?? -1;
    const rss = rssMiB(relayPid);
    await stopRelay();
    log(`relayScale: restart with ${options.changes} Releases not up to date`);
    const restartSomeStale = await startRelayProcess('restart-some-stale');
    await stopRelay();
    log('relayScale: bringing the changed Releases up to date');
    const now = Date.now();
    await inPool(fleet.slice(0, options.changes), 16, (r, i) =>
      writeStatus(
        kc,
        r,
        upToDateStatus(2, {
          now,
          reconciledAgoMs: ((i * 7919) % 300) * 1000,
          checkedAgoMs: ((i * 104_729) % 600) * 1000,
          stableForMs: 2 * 3_600_000,
        }),
      ),
    );
    log('relayScale: restart with every Release up to date');
    const restartAllUpToDate = await startRelayProcess('restart-all-up-to-date');
    const rssEnd = rssMiB(relay?.pid ?? -1);
    await stopRelay();
    const full = memory[2];
    const perThousand = (
      a: MemoryPoint | undefined,
      b: MemoryPoint | undefined,
      field: 'rssMiB' | 'heapUsedMiB',
    ) =>
      a === undefined || b === undefined || b.releases === a.releases
        ? undefined
        : Math.round(((b.settled[field] - a.settled[field]) / ((b.releases - a.releases) / 1000)) * 100) /
          100;
    const growth = (points: MemoryPoint[]) => ({
      rss: perThousand(points[0], points[2], 'rssMiB'),
      heapUsed: perThousand(points[0], points[2], 'heapUsedMiB'),
      rssFirstHalf: perThousand(points[0], points[1], 'rssMiB'),
      rssSecondHalf: perThousand(points[1], points[2], 'rssMiB'),
    });
    log(
      `relayScale: RSS settled ${memory.map((m) => `${m.settled.rssMiB} MiB at ${m.releases}`).join(', ')}; ${JSON.stringify(growth(memory))} MiB per 1,000 Releases`,
    );
    const fullRss = full?.settled.rssMiB ?? Infinity;
    // MB per 1,000 Releases = (RSS with n - RSS with 0) / (n / 1,000), settled readings.
    const perThousandMiB = growth(memory).rss;
    const rssPer1000Releases = {
      mib: perThousandMiB,
      mb: perThousandMiB === undefined ? undefined : Math.round(perThousandMiB * 1.048576 * 100) / 100,
    };
    log(
      `relayScale: RSS ${memory[0]?.settled.rssMiB} MiB with 0 Releases, ${fullRss} MiB (${mbOf(fullRss)} MB) with ${full?.releases}: ${rssPer1000Releases.mib} MiB = ${rssPer1000Releases.mb} MB per 1,000 Releases`,
    );
    const lagMet =
      lag.p99Ms !== undefined && lag.p99Ms <= TARGET_LAG_P99_MS && lag.received === options.changes;
    return {
      releases: options.releases,
      createWithStatusMs: createMs,
      memory: {
        relay: compiled.label,
        points: memory,
        mibPer1000Releases: growth(memory),
        rssPer1000Releases,
        rssMBSettled: memory.map((m) => ({ releases: m.releases, mb: mbOf(m.settled.rssMiB) })),
        fromSources: {
          relay: fromSources.label,
          points: sourceMemory,
          mibPer1000Releases: growth(sourceMemory),
        },
        target: { rssMBAt10000: TARGET_RSS_MB_AT_10K, growth: 'linear: the two halves grow alike' },
        met: options.releases >= 10_000 ? mbOf(fullRss) <= TARGET_RSS_MB_AT_10K : 'not measured at 10,000',
      },
      relayRssMiB: {
        afterFirstList: firstStart.rssAfterListMiB,
        afterSpecBurst: rss.rss,
        peak: Math.max(rss.peak, rssEnd.peak),
      },
      specChangeBurst: { ...lag, target: { p99Ms: TARGET_LAG_P99_MS }, met: lagMet },
      messagesAfterReady: {
        firstStart: firstStart.burst,
        restartSomeNotUpToDate: restartSomeStale.burst,
        restartAllUpToDate: restartAllUpToDate.burst,
      },
      readyMs: {
        firstStart: firstStart.readyMs,
        restartSomeNotUpToDate: restartSomeStale.readyMs,
        restartAllUpToDate: restartAllUpToDate.readyMs,
      },
      notes: [
        `fleet: ${options.releases} Releases, 100 per namespace, no healthAssessment (health every 10 min), default intervals (reconcile and drift 5 min); status: reconciled within the last 5 min, health checked within the last 10 min, InSync/Healthy unchanged for 2 h`,
        'messagesAfterReady: messages in each queue that many seconds after /readyz answered and the relay led (convoy_relay_leader 1) (queues purged before each start; nothing consumes them)',
        `restartSomeNotUpToDate: the ${options.changes} Releases of the spec-change burst have a newer generation than their status`,
        "memory.points: a relay started on 0 (of this section), n/2 and n Releases; rssMiB once /readyz answers and it leads, settled 5 s later; heapUsedMiB its convoy_relay_nodejs_heap_size_used_bytes; mibPer1000Releases from the settled readings. The relay runs compiled with the image's Node.js flags, as the image runs it (every start of this section); memory.fromSources: the same points from its .ts sources (Node strips the types; ~40 MiB more) without the flags",
      ],
      met: lagMet && (options.releases < 10_000 || mbOf(fullRss) <= TARGET_RSS_MB_AT_10K),
    };
  } finally {
    await relay?.stop(5_000);
    sqs.destroy();
    await aws.stop();
  }
}
