// lambdaRuntime: the three functions measured as Lambda runs them — their
// bundles under the Runtime Interface Emulator + the Node runtime interface client (dev/lambda),
// with the handler, memory, timeout and environment of the construct's synthesized template, fed
// by SQS event source mappings with the template's batch size, window and maximum concurrency
// (the slots capped at `slots` on this 2-core machine) — inside the `convoy dev` composition
// (dev/runtime.ts: fauxqs, the relay, the shipped identities) on the bench's embedded cluster.
//
// N Releases (the bench's reference app: ConfigMap + Deployment + Service, each into its own namespace; the
// syncPolicy, drift and health intervals 30 s) are created at once; once every one is Applied,
// InSync and Healthy, the runtime runs `steadySeconds` more (a couple of intervals of each loop).
// Per function, from the emulator (never from in-process timings):
// - cold starts: the emulator's INIT REPORT duration, p50 and count (one per execution environment);
// - duration (INVOKE RTDONE, init excluded) per invocation and per message (invocation / records),
//   p50 / p99, for the whole run and the steady phase;
// - max memory: the VmHWM of the runtime's node process, against the template's MemorySize;
// then the cost model of bench/lib/cost-model.ts recomputed from the steady phase's durations per
// message and batch sizes, at the construct's default memory per function (DEFAULT_MEMORY_MB, which
// the template synthesized here carries; the template's own sizes too if they ever differ) and at
// the right-sized memory proposed here.
// The functions' own SQS and S3 requests are counted by a proxy per function (their
// AWS_ENDPOINT_URL); the management-apiserver requests are not counted here (perRelease counts them).
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startGitHttpServer } from '../../dev/git-http-server.ts';
import { prepareLambdaFunctions } from '../../dev/lambda/lambda-functions.ts';
import type { InvocationRecord } from '../../dev/lambda/esm-driver.ts';
import { startConvoyRuntime } from '../../dev/runtime.ts';
import { installShippedIdentities } from '../../dev/shipped-identities.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { Loop } from '../../domain/runtime/queue-message.ts';
import { createLogger } from '../../platform/logger.ts';
import { createRepo } from '../../test/harness/git-fixtures.ts';
import { convoyApi } from '../../test/harness/releases.ts';
import { createTenantDeployer, TENANT_DEPLOYER } from '../../test/harness/tenant-deployer.ts';
import { startCountingAwsProxy, type CountingAwsProxy } from '../lib/aws-proxy.ts';
import { countAwsRequests } from '../lib/aws-requests.ts';
import { costModel, DEFAULT_MEMORY_MB, PRICES, type LoopFigures } from '../lib/cost-model.ts';
import { percentile } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';
import { appFiles } from './per-release.ts';

const LOOPS: readonly Loop[] = ['reconcile', 'drift', 'health'];
const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;

export interface LambdaRuntimeOptions {
  /** Releases (default 20). */
  readonly n: number;
  /** Seconds the runtime runs after every Release is Applied, InSync and Healthy (default 75: two 30-s intervals and a half). */
  readonly steadySeconds: number;
  /** Emulators (concurrent invocations) per function at most (default 2; the template's MaximumConcurrency is higher). */
  readonly slots: number;
}

interface Timed {
  readonly at: number;
  readonly record: InvocationRecord;
}

function distribution(values: readonly number[]): {
  count: number;
  p50: number | null;
  p99: number | null;
  mean: number | null;
  max: number | null;
} {
  if (values.length === 0) return { count: 0, p50: null, p99: null, mean: null, max: null };
  return {
    count: values.length,
    p50: round(percentile(values, 50) ?? 0),
    p99: round(percentile(values, 99) ?? 0),
    mean: round(values.reduce((a, b) => a + b, 0) / values.length),
    max: round(Math.max(...values)),
  };
}

/** Durations of a set of invocations: per invocation and per message (invocation duration / its records). */
function durations(invocations: readonly Timed[]) {
  const ok = invocations.filter((t) => t.record.records > 0);
  return {
    invocations: ok.length,
    messages: ok.reduce((a, t) => a + t.record.records, 0),
    recordsPerInvocation: distribution(ok.map((t) => t.record.records)),
    perInvocationMs: distribution(ok.map((t) => t.record.result.durationMs)),
    perMessageMs: distribution(ok.map((t) => t.record.result.durationMs / t.record.records)),
    failed: ok.filter((t) => t.record.settlement.kind !== 'succeeded').length,
  };
}

/** Lambda memory sizes go by 1 MB from 128; proposed: the measured peak × 1.5 (headroom for larger renders), rounded up to 64 MB, at least 256. */
export function rightSize(maxRssMb: number): number {
  return Math.max(256, Math.ceil((maxRssMb * 1.5) / 64) * 64);
}

export async function benchLambdaRuntime(
  kc: KubeConfig,
  options: LambdaRuntimeOptions,
): Promise<Record<string, unknown>> {
  const run = Date.now().toString(36);
  const ns = `lrt-${run}`;
  const installation = `lrt-${run}-system`;
  const targets = Array.from({ length: options.n }, (_, i) => `lrt-${run}-${i}`);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const api = convoyApi(kc);
  const gitRoot = await mkdtemp(join(tmpdir(), 'convoy-bench-lambda-'));
  await createRepo(gitRoot, 'app', appFiles('app'));
  const git = await startGitHttpServer({ projectRoot: gitRoot });
  const logger = createLogger({
    base: { bench: 'lambdaRuntime' },
    level: 'error',
    write: (l) => void process.stderr.write(`${l}\n`),
  });
  // The egress policy refuses loopback: the bench's Git server is the one local server Releases may reach.
  const tenancy = {
    tenantNamespaces: [ns],
    defaultServiceAccount: TENANT_DEPLOYER,
    egressAllow: new URL(git.url).host,
  };
  const cleanups: (() => Promise<unknown>)[] = [];
  const timed: Timed[] = [];
  const proxies = {} as Record<Loop, CountingAwsProxy>;
  try {
    const identities = await installShippedIdentities(kc, {
      namespace: installation,
      tenancy,
      watchSecrets: true,
      clusterScopedSuffix: `-${installation}`,
    });
    cleanups.push(() => identities.remove());
    cleanups.push(await createTenantDeployer(kc, ns));
    await api.create('Cluster', ns, 'local', { inCluster: true });
    for (const target of targets) await core.createNamespace({ body: { metadata: { name: target } } });

    log("lambdaRuntime: synthesizing the construct's template (bundles, settings)");
    const synthStarted = performance.now();
    const prepared = await prepareLambdaFunctions({
      installationNamespace: installation,
      tenancy,
      logLevel: 'warn',
      maxSlots: options.slots,
      waitTimeSeconds: 1,
      // Each function's own SQS and S3 calls through a counting proxy of its own.
      // (The fleet function is not measured here: no ReleaseSet in this section; its SQS calls go straight to fauxqs.)
      environmentOverride: (loop, env) =>
        loop === 'fleet' ? env : { ...env, AWS_ENDPOINT_URL: proxies[loop].url },
      onInvocation: (record) => void timed.push({ at: Date.now(), record }),
      onLine: (loop, slot, line) => {
        if (line.includes('"level":"error"') || /^(INIT_REPORT|Task timed out)/.test(line))
          process.stderr.write(`lambdaRuntime ${loop}[${slot}] ${line}\n`);
      },
    });
    cleanups.push(() => prepared.dispose());
    const synthMs = Math.round(performance.now() - synthStarted);
    const settings = prepared.functions;

    const runtime = await startConvoyRuntime({
      kc,
      logger,
      namespace: installation,
      awsPort: 0,
      onlyNamespaces: [ns],
      identities,
      settings: identities.settings,
      visibilityTimeoutSeconds: prepared.queue.visibilityTimeoutSeconds,
      ...(prepared.queue.maxReceiveCount !== undefined
        ? { maxReceiveCount: prepared.queue.maxReceiveCount }
        : {}),
      functions: async (context) => {
        for (const loop of LOOPS) proxies[loop] = await startCountingAwsProxy(context.endpoint);
        return prepared.start(context);
      },
    });
    cleanups.push(async () => {
      await runtime.stop();
      for (const loop of LOOPS) await proxies[loop]?.stop();
    });
    // The relay's sends and the mappings' receives and deletes, from this process.
    const here = countAwsRequests(runtime.awsEndpoint);
    cleanups.push(() => Promise.resolve(here.stop()));
    while (!runtime.relay.ready()) await sleep(50);

    log(`lambdaRuntime: ${options.n} Releases at once`);
    const created = Date.now();
    const spec = (target: string) => ({
      cluster: { name: 'local' },
      targetNamespace: target,
      source: { git: { url: `${git.url}/app.git`, ref: { branch: 'main' }, path: 'app' } },
      syncPolicy: { interval: '30s' },
      driftDetection: { interval: '30s' },
      healthAssessment: { interval: '30s' },
    });
    const firstDeploy = await here.during(async () => {
      await Promise.all(targets.map((target, i) => api.create('Release', ns, `app-${i}`, spec(target))));
      const deadline = Date.now() + 300_000;
      for (;;) {
        const list = (await custom.listNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION,
          namespace: ns,
          plural: 'releases',
        })) as { items: Release[] };
        const done = list.items.filter((r) =>
          ['Applied', 'InSync', 'Healthy'].every(
            (type) => r.status?.conditions?.find((c) => c.type === type)?.status === 'True',
          ),
        );
        if (done.length === options.n) break;
        if (Date.now() > deadline) {
          const why = list.items
            .filter((r) => !done.includes(r))
            .slice(0, 3)
            .map((r) =>
              JSON.stringify(
                r.status?.conditions?.map((c) =>
                  `${c.type}=${c.status} ${c.reason}: ${c.message ?? ''}`.slice(0, 200),
                ),
              ),
            );
          throw new Error(
            `lambdaRuntime: ${done.length} of ${options.n} Releases Applied, InSync and Healthy after 300 s; e.g. ${why.join(' | ')}`,
          );
        }
        await sleep(1000);
      }
    });
    const firstDeployMs = Date.now() - created;
    const steadyFrom = Date.now();
    const firstDeployCalls = Object.fromEntries(LOOPS.map((loop) => [loop, proxies[loop].take()])) as Record<
      Loop,
      Record<string, number>
    >;
    log(
      `lambdaRuntime: all ${options.n} Ready in ${Math.round(firstDeployMs / 1000)} s; ${options.steadySeconds} s of steady state (30-s intervals)`,
    );
    const steady = await here.during(() => sleep(options.steadySeconds * 1000));
    const functionCalls = Object.fromEntries(LOOPS.map((loop) => [loop, proxies[loop].take()])) as Record<
      Loop,
      Record<string, number>
    >;
    const until = Date.now();

    const perFunction: Record<string, unknown> = {};
    const figures = {} as Record<Loop, LoopFigures>;
    const invocationsPerMessage = {} as Record<Loop, number>;
    const measuredMemory = {} as Record<Loop, number>;
    const proposedMemory = {} as Record<Loop, number>;
    for (const loop of LOOPS) {
      const mine = timed.filter((t) => t.record.loop === loop && t.at <= until);
      const steadyMine = mine.filter((t) => t.at >= steadyFrom);
      const cold = mine.map((t) => t.record.result.initMs).filter((v): v is number => v !== undefined);
      const rssKb = Math.max(0, ...mine.map((t) => t.record.result.maxRssKb ?? 0));
      const rssMb = round(rssKb / 1024);
      const memorySize = settings[loop].memorySize;
      measuredMemory[loop] = rssMb;
      proposedMemory[loop] = Math.min(memorySize, rightSize(rssMb));
      const steadyDurations = durations(steadyMine);
      const calls = functionCalls[loop];
      const perMessage = (keys: readonly string[]): number =>
        round(keys.reduce((a, k) => a + (calls[k] ?? 0), 0) / Math.max(1, steadyDurations.messages), 3);
      const msPerMessage = steadyDurations.perMessageMs.mean ?? durations(mine).perMessageMs.mean ?? 0;
      figures[loop] = {
        msPerMessage,
        sqsRequests: perMessage(Object.keys(calls).filter((k) => k.startsWith('SQS '))),
        s3Get: perMessage(['S3 GET']),
        s3Other: perMessage(['S3 PUT', 'S3 HEAD', 'S3 LIST']),
      };
      invocationsPerMessage[loop] = steadyDurations.invocations / Math.max(1, steadyDurations.messages);
      perFunction[loop] = {
        template: {
          handler: settings[loop].handler,
          memorySizeMb: memorySize,
          timeoutSeconds: settings[loop].timeoutSeconds,
          batchSize: settings[loop].eventSource.batchSize,
          maximumBatchingWindowSeconds: settings[loop].eventSource.maximumBatchingWindowInSeconds,
          maximumConcurrency: settings[loop].eventSource.maximumConcurrency ?? null,
          slotsHere: Math.min(settings[loop].eventSource.maximumConcurrency ?? 1000, options.slots),
        },
        coldStart: { count: cold.length, initMs: distribution(cold) },
        all: durations(mine),
        steady: steadyDurations,
        maxMemory: {
          maxRssMb: rssMb,
          memorySizeMb: memorySize,
          usedFraction: round(rssMb / memorySize, 3),
          proposedMb: proposedMemory[loop],
        },
        functionAwsCalls: { firstDeploy: firstDeployCalls[loop], steady: calls },
      };
    }
    const initGbSeconds = Object.fromEntries(
      LOOPS.map((loop) => {
        const p50 =
          (perFunction[loop] as { coldStart: { initMs: { p50: number | null } } }).coldStart.initMs.p50 ?? 0;
        const gbSeconds = ((p50 / 1000) * DEFAULT_MEMORY_MB[loop]) / 1024;
        return [
          loop,
          {
            memoryMb: DEFAULT_MEMORY_MB[loop],
            atDefaultMemory: round(gbSeconds, 4),
            usdPerMillionColdStarts: round(gbSeconds * PRICES.lambdaPerGbSecond * 1e6, 2),
          },
        ];
      }),
    );
    const templateMemory = Object.fromEntries(LOOPS.map((l) => [l, settings[l].memorySize])) as Record<
      Loop,
      number
    >;
    // The section passes no memorySize, so the template carries the construct's defaults; priced at those, per function.
    const templateIsDefault = LOOPS.every((l) => templateMemory[l] === DEFAULT_MEMORY_MB[l]);
    const priced = (memoryMb: Readonly<Record<Loop, number>>) => ({
      memoryMb: { ...memoryMb },
      n1000: costModel(1000, 5, figures, { memoryMb, invocationsPerMessage }),
      n10000: costModel(10_000, 5, figures, { memoryMb, invocationsPerMessage }),
    });
    return {
      n: options.n,
      app: 'ConfigMap + Deployment + Service per Release (each its own targetNamespace), one Git repository; syncPolicy, drift and health intervals 30 s',
      synthMs,
      firstDeployMs,
      steadySeconds: options.steadySeconds,
      functions: perFunction,
      memory: {
        measuredMaxRssMb: measuredMemory,
        templateMemorySizeMb: templateMemory,
        constructDefaultMb: { ...DEFAULT_MEMORY_MB },
        proposedMemorySizeMb: proposedMemory,
        rule: "proposed = max(256, ceil(1.5 × measured max RSS / 64) × 64), never above the template's; Lambda gives CPU in proportion to memory (1,769 MB = 1 vCPU), so a smaller size also slows CPU-bound work: the durations here ran on a full core",
        measuredOf:
          "VmHWM of the runtime's node process only: helm and kubectl run as child processes of reconcile for Helm and Kustomize sources (not in this app) and count toward Lambda's memory too",
      },
      awsFromThisProcess: { firstDeploy: firstDeploy.byRequest, steady: steady.byRequest },
      costModel: {
        fromEmulator:
          "msPerMessage = the steady phase's mean emulator duration per message (INVOKE RTDONE / records of the invocation); invocations per message = the steady phase's batches; sqsRequests, s3Get, s3Other = the functions' own calls per message (counting proxy)",
        fromConstants:
          "prices (bench/lib/cost-model.ts PRICES: us-east-1 list, x86); the relay's send + one receive + one delete per message (an upper bound); 5-minute interval",
        notCounted:
          'management-apiserver requests (perRelease counts them); the init phase (billed since 2025-08: initGbSecondsPerColdStart, cold starts per day depend on how long AWS keeps environments)',
        initGbSecondsPerColdStart: initGbSeconds,
        atDefaultMemory: {
          note: "the construct's default memory per function (DEFAULT_MEMORY_MB, infra/convoy-props.ts)",
          ...priced(DEFAULT_MEMORY_MB),
        },
        ...(templateIsDefault
          ? {}
          : {
              atTemplateMemory: {
                note: "the synthesized template's MemorySize, which differs from the defaults",
                ...priced(templateMemory),
              },
            }),
        atProposedMemory: {
          note: 'the same durations at the proposed memory: a lower bound (less memory is less CPU on Lambda)',
          ...priced(proposedMemory),
        },
      },
      met: LOOPS.every((loop) => measuredMemory[loop] > 0 && measuredMemory[loop] < templateMemory[loop]),
      metMeans: 'every function ran under the emulator and its max RSS stayed below its MemorySize',
    };
  } finally {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((e: unknown) => log(`lambdaRuntime: cleanup failed: ${String(e)}`));
    await git.stop();
    await rm(gitRoot, { recursive: true, force: true });
    for (const namespace of [ns, installation, ...targets])
      await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }
}
