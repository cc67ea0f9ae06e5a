// queueLatency: the production path in one process, as `convoy dev --embedded`
// runs it: relay (watch) → SQS (fauxqs) → poller → reconcile function handler → status.
// Targets: event → Applied p50 < 1 s, p99 < 3 s.
import type { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { startConvoyRuntime } from '../../dev/runtime.ts';
import { createLogger } from '../../platform/logger.ts';
import { startReconcileEnv } from '../../test/harness/reconcile-env.ts';
import {
  diffRequests,
  fetchMetrics,
  isApiserverOwn,
  parseSeries,
  summarize,
  timeByResource,
} from '../lib/apiserver-metrics.ts';
import type { ClientRequestCounter } from '../lib/client-requests.ts';
import { smallRenderFiles } from '../lib/fixtures.ts';
import { watchApplied } from '../lib/kube.ts';
import { ms, percentile, since } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';

export interface QueueLatencyOptions {
  sequential: number;
  burst: number;
}

const TARGETS = { p50Ms: 1_000, p99Ms: 3_000 };
const WARMUP_TIMEOUT_MS = 120_000;
const ONE_TIMEOUT_MS = 30_000;
const BURST_TIMEOUT_MS = 300_000;

/**
 * From the batch handlers' outcome log lines (they carry `durationMs`): the reconcile
 * handler's own time of each Release's first run, and the runs of every loop
 * (reconcile, and drift and health once `convoy dev` wires them) per outcome.
 */
function handlerLog(namespace: string) {
  const firstMs = new Map<string, number>();
  /** phase (name prefix) → `fn outcome[: reason]` → runs. */
  const outcomes = new Map<string, Map<string, number>>();
  const write = (line: string): void => {
    let entry:
      | {
          level?: unknown;
          fn?: unknown;
          namespace?: unknown;
          name?: unknown;
          durationMs?: unknown;
          outcome?: unknown;
          reason?: unknown;
        }
      | undefined;
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      entry = undefined;
    }
    if (
      entry?.namespace === namespace &&
      typeof entry.name === 'string' &&
      typeof entry.durationMs === 'number'
    ) {
      const fn = String(entry.fn);
      if (fn === 'reconcile' && !firstMs.has(entry.name)) firstMs.set(entry.name, entry.durationMs);
      const phase = entry.name.split('-')[0] ?? '';
      const key = `${fn} ${String(entry.outcome)}${typeof entry.reason === 'string' ? `: ${entry.reason.slice(0, 120)}` : ''}`;
      const counts = outcomes.get(phase) ?? new Map<string, number>();
      counts.set(key, (counts.get(key) ?? 0) + 1);
      outcomes.set(phase, counts);
    }
    if (entry === undefined || entry.level === 'warn' || entry.level === 'error')
      process.stderr.write(`${line}\n`);
  };
  const outcomesOf = (phase: string): Record<string, number> =>
    Object.fromEntries([...(outcomes.get(phase) ?? [])].sort(([a], [b]) => a.localeCompare(b)));
  return { firstMs, write, outcomesOf };
}

export async function benchQueueLatency(
  kc: KubeConfig,
  client: ClientRequestCounter,
  opts: QueueLatencyOptions,
): Promise<Record<string, unknown>> {
  const env = await startReconcileEnv(kc, 'bench-queue');
  const cleanups: (() => Promise<void>)[] = [() => env.close()];
  try {
    const seqNames = Array.from({ length: opts.sequential }, (_, i) => `seq-${String(i).padStart(3, '0')}`);
    const burstNames = Array.from({ length: opts.burst }, (_, i) => `burst-${String(i).padStart(3, '0')}`);
    const repo = await env.repo(
      'small',
      smallRenderFiles('releases', ['warmup', ...seqNames, ...burstNames]),
    );
    const spec = (name: string) => ({
      cluster: { name: 'local' },
      source: { git: { url: repo.url, ref: { branch: 'main' }, path: `releases/${name}` } },
    });

    const handler = handlerLog(env.ns.name);
    const logger = createLogger({ base: { app: 'convoy-bench' }, level: 'info', write: handler.write });
    const runtime = await startConvoyRuntime({ kc, logger, namespace: 'convoy-bench-system' });
    cleanups.push(() => runtime.stop());
    const watchErrors: string[] = [];
    const applied = await watchApplied(kc, env.ns.name, (e) =>
      watchErrors.push(e instanceof Error ? e.message : String(e)),
    );
    cleanups.push(() => Promise.resolve(applied.stop()));

    // Not measured: relay leadership and first list, git clone, tool lookup, first Lease.
    log('queueLatency: warm-up Release');
    const warmStart = performance.now();
    await env.api.create('Release', env.ns.name, 'warmup', spec('warmup'));
    await applied.waitFor('warmup', WARMUP_TIMEOUT_MS);
    const warmupMs = since(warmStart);

    log(`queueLatency: ${opts.sequential} Releases one by one`);
    const latencies: number[] = [];
    const timedOut: string[] = [];
    for (const name of seqNames) {
      const created = performance.now();
      await env.api.create('Release', env.ns.name, name, spec(name));
      try {
        latencies.push(ms((await applied.waitFor(name, ONE_TIMEOUT_MS)) - created));
      } catch {
        timedOut.push(name);
      }
    }

    log(`queueLatency: ${opts.burst} Releases at once`);
    const metricsBefore = await fetchMetrics(kc);
    const burstStart = performance.now();
    const createdAt = new Map<string, number>();
    let createsMs = 0;
    let burstComplete = true;
    const { count: burstRequests } = await client.during(async () => {
      await Promise.all(
        burstNames.map(async (name) => {
          createdAt.set(name, performance.now());
          await env.api.create('Release', env.ns.name, name, spec(name));
        }),
      );
      createsMs = since(burstStart);
      try {
        await applied.waitForAll(burstNames, BURST_TIMEOUT_MS);
      } catch {
        burstComplete = false;
      }
    });
    const metricsAfter = await fetchMetrics(kc);
    // Applied is seen when the status is written; the handler logs its outcome a moment later.
    await sleep(1_000);
    const grownCounts = diffRequests(
      parseSeries(metricsBefore, 'apiserver_request_total'),
      parseSeries(metricsAfter, 'apiserver_request_total'),
    );
    const grownSeconds = diffRequests(
      parseSeries(metricsBefore, 'apiserver_request_duration_seconds_sum'),
      parseSeries(metricsAfter, 'apiserver_request_duration_seconds_sum'),
    ).filter((x) => !isApiserverOwn(x));
    const burstApplied = burstNames.filter((n) => applied.appliedAt.has(n));
    const lastApplied = Math.max(...burstApplied.map((n) => applied.appliedAt.get(n) ?? 0));
    const burstLatencies = burstApplied.map((n) =>
      ms((applied.appliedAt.get(n) ?? 0) - (createdAt.get(n) ?? 0)),
    );

    const seqHandler = seqNames.flatMap((n) => (handler.firstMs.has(n) ? [handler.firstMs.get(n) ?? 0] : []));
    const burstHandler = burstNames.flatMap((n) =>
      handler.firstMs.has(n) ? [handler.firstMs.get(n) ?? 0] : [],
    );
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const met =
      timedOut.length === 0 &&
      p50 !== undefined &&
      p99 !== undefined &&
      p50 < TARGETS.p50Ms &&
      p99 < TARGETS.p99Ms;
    return {
      how: 'convoy dev --embedded composition (dev/runtime.ts: relay, fauxqs SQS, one poller per queue with 1 s long polls, batches of 10, the real function handlers); latency = create request sent → the watch sees Applied True. handlerRuns counts every loop that ran for these Releases (drift and health run too when convoy dev wires them); clientRequests and apiserver* cover everything this process asked the API server during the burst',
      targets: { sequential: TARGETS, burst: 'none given (the time is reported only)' },
      met,
      warmupMs,
      sequential: {
        releases: opts.sequential,
        objectsPerRelease: 2,
        p50Ms: p50,
        p99Ms: p99,
        minMs: percentile(latencies, 0),
        maxMs: percentile(latencies, 100),
        meanMs:
          latencies.length > 0 ? ms(latencies.reduce((a, b) => a + b, 0) / latencies.length) : undefined,
        timedOut,
        handlerRuns: handler.outcomesOf('seq'),
        handlerMs: {
          p50: percentile(seqHandler, 50),
          p99: percentile(seqHandler, 99),
          note: "the reconcile handler alone (Lease, load, reconcile, status), from its outcome log line; the rest of the latency is the relay (watch, 200 ms coalescing window), SQS and the bench's status watch",
        },
      },
      burst: {
        releases: opts.burst,
        createsMs,
        allAppliedMs: burstComplete ? ms(lastApplied - burstStart) : undefined,
        applied: burstApplied.length,
        p50Ms: percentile(burstLatencies, 50),
        p99Ms: percentile(burstLatencies, 99),
        complete: burstComplete,
        handlerRuns: handler.outcomesOf('burst'),
        handlerMs: {
          p50: percentile(burstHandler, 50),
          p99: percentile(burstHandler, 99),
          note: 'first run of each Release',
        },
        clientRequests: {
          total: burstRequests.total,
          perRelease: ms(burstRequests.total / opts.burst),
          byRequest: burstRequests.byRequest,
        },
        apiserverRequests: summarize(grownCounts.filter((x) => !isApiserverOwn(x))).byResource,
        apiserverSecondsTop: timeByResource(grownSeconds),
      },
      watchErrors,
    };
  } finally {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((e: unknown) => log(`queueLatency cleanup failed: ${String(e)}`));
  }
}
