// The four functions (reconcile, drift, health and fleet, the ReleaseSet loop) as Lambda runs them: each function's bundle (the template's code asset) under
// the emulator with the template's handler, memory, timeout and environment, fed by an event source
// mapping with the template's settings. `prepareLambdaFunctions` synthesizes the construct's template
// first (the queues are then made with its visibility timeout and redrive policy); `start` runs them
// against the queues, bucket and management cluster of a runtime (dev/runtime.ts).
//
// What stands for AWS here, and only that, is added to the template's environment: the credentials,
// region and endpoints Lambda or the SDK configuration would give (AWS_ENDPOINT_URL: fauxqs; the
// Secrets Manager stand-in for the hint key), and the places of a Lambda container's file system —
// the task root (a read-only copy of the asset), /opt (the layers, extracted; CONVOY_HELM and
// CONVOY_KUBECTL point there since this machine's /opt is not the container's) and /tmp (a private
// folder per slot: a template value under /tmp is mapped into it, as each Lambda container has its own).
import { randomBytes } from 'node:crypto';
import { chmod, cp, lstat, mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { KubeConfig } from '@kubernetes/client-node';
import { extractZip } from '../../adapters/tools/binaries.ts';
import { QUEUE_LOOPS, type QueueLoop } from '../../domain/runtime/queue-message.ts';
import type { Logger } from '../../platform/logger.ts';
import { ownedTempPrefix } from '../stale-dirs.ts';
import { startEmulator, type Emulator } from './emulator.ts';
import { startEventSourceDriver, type EventSourceDriver, type InvocationRecord } from './esm-driver.ts';
import { resolveEnvironment, type LocalResource } from './resolve.ts';
import { findLambdaRuntime, type LambdaRuntimeBuild } from './runtime-build.ts';
import { startSecretsEndpoint, type SecretsEndpoint } from './secrets-endpoint.ts';
import { synthEmulatorStack, type Synthesized } from './synth.ts';
import { readFunctionSettings, type CfnTemplate, type FunctionSettings } from './template.ts';

const LOOPS: readonly QueueLoop[] = QUEUE_LOOPS;
const REGION = 'us-east-1';
const ACCOUNT = '000000000000';

export interface LambdaFunctionsOptions {
  readonly installationNamespace: string;
  /** The construct's tenancy prop (the same settings the relay ConfigMap carries). */
  readonly tenancy?: Record<string, unknown>;
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** More construct props (tests: functionTimeout, maxConcurrency, memorySize…). */
  readonly props?: Record<string, unknown>;
  /** Caps each mapping's slots below the template's MaximumConcurrency (a laptop's or CI's cores); default the template's. */
  readonly maxSlots?: number;
  /** Each line a function prints, with its loop and slot; default dropped. */
  readonly onLine?: (loop: QueueLoop, slot: number, line: string) => void;
  readonly onInvocation?: (record: InvocationRecord) => void;
  /** Extra environment for a loop's runtime, after the template's (tests of bad input only). */
  readonly environmentOverride?: (loop: QueueLoop, env: Record<string, string>) => Record<string, string>;
  /** Long-poll wait of the mappings; default 20 s (as AWS). */
  readonly waitTimeSeconds?: number;
  /** A template already synthesized (by the caller, once per test file). */
  readonly synthesized?: Synthesized;
}

/** What the runtime hands over when its queues, bucket and identities exist. */
export interface FunctionsContext {
  readonly sqs: SQSClient;
  readonly endpoint: string;
  readonly queues: Record<QueueLoop, { queueUrl: string; queueArn: string; dlqUrl: string }>;
  readonly bucket: string;
  /** The functions' identity (dev/shipped-identities.ts), never admin. */
  readonly functionsKc: KubeConfig;
  readonly logger: Logger;
}

export interface PreparedLambdaFunctions {
  readonly functions: Readonly<Record<QueueLoop, FunctionSettings>>;
  readonly template: CfnTemplate;
  /** The queues' settings from the template (the same for the four). */
  readonly queue: { readonly visibilityTimeoutSeconds: number; readonly maxReceiveCount: number | undefined };
  readonly dir: string;
  start(context: FunctionsContext): Promise<LambdaFunctions>;
  /** Removes the private folder (after stop). */
  dispose(): Promise<void>;
}

export interface LambdaFunctions {
  /** The functions' settings as the template has them. */
  readonly functions: Readonly<Record<QueueLoop, FunctionSettings>>;
  readonly drivers: Readonly<Record<QueueLoop, EventSourceDriver>>;
  /**
   * One more execution environment of a function, outside its mapping (the bench; tests of bad
   * input): the template's settings, this runtime's stand-ins, `environment` changing the result
   * (return the variables to run with). The caller invokes and stops it.
   */
  startEmulator(
    loop: QueueLoop,
    environment?: (env: Record<string, string>) => Record<string, string>,
  ): Promise<Emulator>;
  readonly secrets: SecretsEndpoint;
  readonly invocations: () => InvocationRecord[];
  stop(): Promise<void>;
}

export async function prepareLambdaFunctions(
  options: LambdaFunctionsOptions,
): Promise<PreparedLambdaFunctions> {
  const runtime = findLambdaRuntime();
  const dir = await mkdtemp(join(tmpdir(), ownedTempPrefix('convoy-lambda-')));
  const kubeconfigPath = join(dir, 'functions-kubeconfig.yaml');
  const synthesized =
    options.synthesized ??
    (await synthEmulatorStack({
      kubeconfigPath,
      outdir: join(dir, 'cdk.out'),
      installationNamespace: options.installationNamespace,
      ...(options.logLevel !== undefined ? { logLevel: options.logLevel } : {}),
      props: { ...(options.tenancy !== undefined ? { tenancy: options.tenancy } : {}), ...options.props },
    }));
  const functions = readFunctionSettings(synthesized.template);
  const queue = functions.reconcile.eventSource.queue;
  return {
    functions,
    template: synthesized.template,
    queue: {
      visibilityTimeoutSeconds: queue.visibilityTimeoutSeconds,
      maxReceiveCount: queue.redrive?.maxReceiveCount,
    },
    dir,
    start: (context) =>
      startLambdaFunctions({ options, runtime, dir, kubeconfigPath, synthesized, functions, context }),
    dispose: async () => {
      await makeWritable(dir).catch(() => undefined);
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}

async function startLambdaFunctions(args: {
  options: LambdaFunctionsOptions;
  runtime: LambdaRuntimeBuild;
  dir: string;
  kubeconfigPath: string;
  synthesized: Synthesized;
  functions: Readonly<Record<QueueLoop, FunctionSettings>>;
  context: FunctionsContext;
}): Promise<LambdaFunctions> {
  const { options, runtime, dir, synthesized, functions, context } = args;
  // The functions' identity as a kubeconfig file (the template's CONVOY_KUBECONFIG_PATH names it).
  await writeFile(args.kubeconfigPath, context.functionsKc.exportConfig(), { mode: 0o600 });
  const secrets = await startSecretsEndpoint({ region: REGION, account: ACCOUNT });
  const resources = localResources(synthesized.template, functions, context, secrets);
  const sdk = awsSdkModules();
  const drivers = {} as Record<QueueLoop, EventSourceDriver>;
  const all: InvocationRecord[] = [];
  const templateEnvs = {} as Record<QueueLoop, Record<string, string>>;
  const extra: Emulator[] = [];
  /** An execution environment of `loop`: its task root, layers, a private /tmp, the template's environment. */
  const emulatorFor = async (
    loop: QueueLoop,
    slot: string,
    change?: (env: Record<string, string>) => Record<string, string>,
  ): Promise<Emulator> => {
    const fn = functions[loop];
    const fnDir = join(dir, loop);
    const slotTmp = join(fnDir, `tmp-${slot}`);
    await rm(slotTmp, { recursive: true, force: true });
    await mkdir(slotTmp, { recursive: true });
    let env: Record<string, string> = {
      ...mapTmp(templateEnvs[loop], slotTmp, dir),
      ...lambdaEnvironment({ loop, fn, slotTmp, endpoint: context.endpoint, secrets: secrets.url }),
      ...(await layerTools(join(fnDir, 'opt'))),
    };
    if (options.environmentOverride) env = options.environmentOverride(loop, env);
    if (change) env = change(env);
    return startEmulator({
      runtime,
      taskRoot: join(fnDir, 'task'),
      handler: fn.handler,
      functionName: fn.logicalId,
      memorySize: fn.memorySize,
      timeoutSeconds: fn.timeoutSeconds,
      environment: env,
      ...(options.onLine
        ? {
            onLine: (line: string) =>
              options.onLine?.(loop, Number.isNaN(Number(slot)) ? -1 : Number(slot), line),
          }
        : {}),
    });
  };
  try {
    for (const loop of LOOPS) {
      const fn = functions[loop];
      const fnDir = join(dir, loop);
      const taskRoot = join(fnDir, 'task');
      await cp(join(synthesized.outdir, fn.codeAsset), taskRoot, { recursive: true });
      await makeReadOnly(taskRoot);
      // Lambda's runtime provides the AWS SDK v3 the bundles leave external: only @aws-sdk/* is visible beside the task root.
      await mkdir(join(fnDir, 'node_modules'), { recursive: true });
      await symlink(sdk, join(fnDir, 'node_modules', '@aws-sdk'));
      const opt = join(fnDir, 'opt');
      for (const layer of fn.layerAssets) await extractZip(join(synthesized.outdir, layer), opt);
      templateEnvs[loop] = resolveEnvironment(fn.environment, resources);
      const slots = Math.max(
        1,
        Math.min(fn.eventSource.maximumConcurrency ?? 1000, options.maxSlots ?? Number.POSITIVE_INFINITY),
      );
      drivers[loop] = startEventSourceDriver({
        loop,
        sqs: context.sqs,
        queueUrl: context.queues[loop].queueUrl,
        queueArn: context.queues[loop].queueArn,
        settings: fn.eventSource,
        slots,
        logger: context.logger,
        ...(options.waitTimeSeconds !== undefined ? { waitTimeSeconds: options.waitTimeSeconds } : {}),
        onInvocation: (record) => {
          all.push(record);
          options.onInvocation?.(record);
        },
        startEmulator: (slot) => emulatorFor(loop, String(slot)),
      });
    }
  } catch (error) {
    await Promise.allSettled(Object.values(drivers).map((d) => d.stop()));
    await secrets.stop();
    throw error;
  }
  return {
    functions,
    drivers,
    secrets,
    invocations: () => [...all],
    async startEmulator(loop, change) {
      const emulator = await emulatorFor(loop, `x${extra.length}`, change);
      extra.push(emulator);
      return emulator;
    },
    async stop() {
      await Promise.allSettled(LOOPS.map((loop) => drivers[loop].stop()));
      await Promise.allSettled(extra.map((e) => e.stop()));
      await secrets.stop();
    },
  };
}

/** Logical id → local stand-in: the queues and DLQs, the render bucket, the hint-key secret. */
function localResources(
  template: CfnTemplate,
  functions: Readonly<Record<QueueLoop, FunctionSettings>>,
  context: FunctionsContext,
  secrets: SecretsEndpoint,
): Record<string, LocalResource> {
  const map: Record<string, LocalResource> = {};
  for (const loop of LOOPS) {
    const queue = functions[loop].eventSource.queue;
    const local = context.queues[loop];
    map[queue.logicalId] = {
      ref: local.queueUrl,
      attributes: { Arn: local.queueArn, QueueUrl: local.queueUrl },
    };
    if (queue.redrive) map[queue.redrive.deadLetterLogicalId] = { ref: local.dlqUrl };
  }
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type === 'AWS::S3::Bucket')
      map[id] = { ref: context.bucket, attributes: { Arn: `arn:aws:s3:::${context.bucket}` } };
    if (resource.Type === 'AWS::SecretsManager::Secret') {
      // A fresh value per start, as Secrets Manager generates one per installation.
      const arn = secrets.put(id, randomBytes(32).toString('hex'));
      map[id] = { ref: arn, attributes: { Id: arn } };
    }
  }
  return map;
}

/** What Lambda (or the SDK's configuration, for the endpoints) sets beside the function's own environment. */
function lambdaEnvironment(a: {
  loop: QueueLoop;
  fn: FunctionSettings;
  slotTmp: string;
  endpoint: string;
  secrets: string;
}): Record<string, string> {
  return {
    AWS_REGION: REGION,
    AWS_DEFAULT_REGION: REGION,
    AWS_ACCESS_KEY_ID: 'convoy-lambda-emulator',
    AWS_SECRET_ACCESS_KEY: 'convoy-lambda-emulator',
    AWS_SESSION_TOKEN: 'convoy-lambda-emulator',
    AWS_ENDPOINT_URL: a.endpoint,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: a.secrets,
    AWS_EXECUTION_ENV: `AWS_Lambda_${a.fn.runtime}`,
    AWS_LAMBDA_LOG_FORMAT: 'Text',
    TMPDIR: a.slotTmp,
    HOME: a.slotTmp,
    TZ: ':UTC',
    LANG: 'en_US.UTF-8',
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
  };
}

/** A value naming Lambda's /tmp names this slot's private folder instead (not one already inside this runtime's folder, e.g. the kubeconfig). */
function mapTmp(env: Record<string, string>, slotTmp: string, own: string): Record<string, string> {
  const mapped = (v: string) =>
    (v === '/tmp' || v.startsWith('/tmp/')) && v !== own && !v.startsWith(`${own}/`);
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k, mapped(v) ? slotTmp + v.slice('/tmp'.length) : v]),
  );
}

/** The layer's helm and kubectl at their /opt places, when the function has them. */
async function layerTools(opt: string): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const [name, variable] of [
    ['helm', 'CONVOY_HELM'],
    ['kubectl', 'CONVOY_KUBECTL'],
  ] as const) {
    const path = join(opt, name, name);
    if (
      await stat(path).then(
        (s) => s.isFile(),
        () => false,
      )
    ) {
      // The zip reader keeps no mode bits; Lambda's layer binaries are executable.
      await chmod(path, 0o755);
      found[variable] = path;
    }
  }
  return found;
}

/** The @aws-sdk folder of the node_modules this package resolves its SDK from. */
function awsSdkModules(): string {
  const manifest = createRequire(import.meta.url).resolve('@aws-sdk/client-sqs/package.json');
  return dirname(dirname(manifest));
}

/** chmod -R a-w (as root the bits do not stop a write: docs/lambda-runtime.md). */
async function makeReadOnly(path: string): Promise<void> {
  const info = await stat(path);
  if (info.isDirectory()) for (const entry of await readdir(path)) await makeReadOnly(join(path, entry));
  await chmod(path, info.mode & ~0o222);
}

async function makeWritable(path: string): Promise<void> {
  const info = await lstat(path);
  if (info.isSymbolicLink()) return;
  await chmod(path, info.mode | 0o200);
  if (info.isDirectory())
    for (const entry of await readdir(path)) await makeWritable(join(path, entry)).catch(() => undefined);
}
