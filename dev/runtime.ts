// convoy's whole runtime in one process: fauxqs (SQS + S3), the relay, one
// local event-source-mapping poller per queue calling the real function
// handlers, and the HTTP API. Used by `convoy dev`, the end-to-end tests and
// the benchmarks; the handlers are exactly the ones Lambda runs.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { startFauxqs } from 'fauxqs';
import { fromClientNodeKubeConfig } from '../adapters/kube/client-node-config.ts';
import type { KubeClientConfig } from '../adapters/kube/kubeconfig.ts';
import { createS3RenderStore } from '../adapters/store/s3-render-store.ts';
import { ensureQueueWithDlq } from '../adapters/sqs/queues.ts';
import {
  FLEET_LOOP,
  NOTIFY_LOOP,
  parseQueueMessage,
  type Loop,
  type MessageLoop,
} from '../domain/runtime/queue-message.ts';
import { deriveTimings } from '../domain/runtime/timings.ts';
import type { FunctionClients } from '../functions/runtime/clients.ts';
import { tenancyFromEnv } from '../platform/tenancy-config.ts';
import { hintKey } from '../functions/runtime/applied-hint.ts';
import { functionEnvSchema, type FunctionConfig } from '../functions/runtime/config.ts';
import type { Logger } from '../platform/logger.ts';
import type { SqsBatchHandler } from '../functions/runtime/sqs-batch-handler.ts';
import { createReconcileHandler } from '../functions/reconcile/create-handler.ts';
import { createFleetHandler } from '../functions/fleet/create-handler.ts';
import { createNotifyHandler } from '../functions/notify/create-handler.ts';
import { createApiApp } from '../relay/http/app.ts';
import { createKubeAuthenticator } from '../relay/http/auth.ts';
import { createGitWebhookHandler, createKubeWebhookReleaseSource } from '../relay/http/git-hooks.ts';
import { createReleaseApi } from '../relay/http/release-api.ts';
import { userClustersOf } from '../relay/http/user-cluster.ts';
import { serveApi } from '../relay/http/serve.ts';
import { startRelay, type Relay } from '../relay/relay.ts';
import type { BatchSendPort } from '../relay/send/queue-sender.ts';
import { startPoller, type Poller } from './sqs-poller.ts';
import { ownedTempPrefix } from './stale-dirs.ts';
import { observerHandlers } from './observer-handlers.ts';
import { DEV_EVENT_BUS, receiverDeliver, type NotificationReceiver } from './notification-receiver.ts';

export interface RuntimeOptions {
  kc: KubeConfig;
  logger: Logger;
  /** Installation namespace (Leases); created when missing. */
  namespace?: string;
  /** Port of the embedded SQS/S3 server; 0 picks one. */
  awsPort?: number;
  /** Port of the HTTP API; 0 picks one; undefined: no API. */
  apiPort?: number;
  /** Visibility timeout of the queues (the function timeout on AWS). */
  visibilityTimeoutSeconds?: number;
  maxReceiveCount?: number;
  relayTickMs?: number;
  /** SQS batches each queue's poller hands to its function at once; default POLLER_CONCURRENCY (5). */
  pollerConcurrency?: number;
  /** The reconcile function's CONVOY_MAX_RENDER_OBJECTS (domain/reconcile/render-limits.ts); default its default. */
  maxRenderObjects?: number | undefined;
  /**
   * Only Releases in these namespaces are sent to the queues; default every
   * namespace. The relay watches the whole cluster, so tests that share one
   * apiserver use this to keep a runtime off other tests' Releases.
   */
  onlyNamespaces?: readonly string[];
  /** Secret of POST /v1/hooks/git (HMAC key for GitHub/Gitea, token for GitLab); unset: webhooks answer 503. */
  gitWebhookSecret?: string;
  /** convoy dev's notification receiver: the notify loop's EventBridge and Slack go there (dev/notification-receiver.ts). */
  notificationReceiver?: Pick<NotificationReceiver, 'url' | 'slackBaseUrl'>;
  /**
   * Who the loops act as (dev/shipped-identities.ts: the relay's ServiceAccount, the functions'
   * group, under the install manifests' RBAC). Unset: every loop acts as `kc` (tests of a loop's
   * logic that do not claim anything about identity).
   */
  identities?: { readonly relay: KubeConfig; readonly functions: KubeConfig };
  /**
   * The installation's settings as the relay ConfigMap holds them (tenancy, CONVOY_WATCH_SECRETS).
   * Unset (a test's or bench's runtime of loop logic, standing for no installation): the defaults,
   * plus loopback in the egress allow list, where such a runtime's Git and Helm servers listen.
   * convoy dev and the harness pass their settings, whose allow list names exactly their servers.
   */
  settings?: Readonly<Record<string, string>>;
  /**
   * Runs the functions instead of the in-process pollers (dev/lambda: the bundles under the Lambda
   * runtime emulator, fed by event source mappings); called once the queues and bucket exist.
   */
  functions?: (context: {
    sqs: SQSClient;
    endpoint: string;
    queues: ConvoyRuntime['queues'];
    bucket: string;
    functionsKc: KubeConfig;
    logger: Logger;
  }) => Promise<{ stop(): Promise<void> }>;
}

export interface ConvoyRuntime {
  awsEndpoint: string;
  /** One queue (and DLQ) per loop: the three Release loops, `fleet` (ReleaseSets) and `notify` (Notifications). */
  queues: Record<MessageLoop, { queueUrl: string; queueArn: string; dlqUrl: string }>;
  bucket: string;
  sqs: SQSClient;
  s3: S3Client;
  apiUrl: string | undefined;
  relay: Relay;
  stop(): Promise<void>;
}

const LOOPS: readonly Loop[] = ['reconcile', 'drift', 'health'];
/**
 * Batches in flight per queue. Lambda starts an SQS event source mapping with five concurrent
 * batches (production allows up to its maxConcurrency, default 10); one batch at a time let a batch
 * waiting on a slow Git server hold up every other Release of the queue (bench slowGit).
 */
const POLLER_CONCURRENCY = 5;

export async function startConvoyRuntime(options: RuntimeOptions): Promise<ConvoyRuntime> {
  const { kc, logger } = options;
  const namespace = options.namespace ?? 'convoy-system';
  await ensureNamespace(kc, namespace);
  const { aws, endpoint, sqs, s3, bucket, queues } = await startEmbeddedAws(options);
  const cacheDir = await mkdtemp(join(tmpdir(), ownedTempPrefix('convoy-dev-cache-')));
  const config: FunctionConfig = functionEnvSchema.parse({
    CONVOY_NAMESPACE: namespace,
    CONVOY_RENDER_BUCKET: bucket,
    CONVOY_RECONCILE_QUEUE_URL: queues.reconcile.queueUrl,
    CONVOY_DRIFT_QUEUE_URL: queues.drift.queueUrl,
    CONVOY_HEALTH_QUEUE_URL: queues.health.queueUrl,
    CONVOY_FLEET_QUEUE_URL: queues.fleet.queueUrl,
    CONVOY_NOTIFY_QUEUE_URL: queues.notify.queueUrl,
    ...(options.notificationReceiver ? { CONVOY_NOTIFY_EVENT_BUS: DEV_EVENT_BUS } : {}),
    CONVOY_CACHE_DIR: cacheDir,
    ...(options.maxRenderObjects !== undefined
      ? { CONVOY_MAX_RENDER_OBJECTS: String(options.maxRenderObjects) }
      : {}),
  });
  const relayKc = options.identities?.relay ?? kc;
  const relayKube = fromClientNodeKubeConfig(relayKc);
  const settings = options.settings ?? { CONVOY_EGRESS_ALLOW: '127.0.0.0/8' };
  const pollers = await startFunctions(options, config, { sqs, s3, endpoint, queues, bucket, settings });

  const relay = startRelay({
    kube: relayKube,
    watchSecrets: settings['CONVOY_WATCH_SECRETS'] !== 'false',
    sqs: options.onlyNamespaces === undefined ? sqs : onlyNamespaces(sqs, options.onlyNamespaces),
    queueUrls: {
      reconcile: queues.reconcile.queueUrl,
      drift: queues.drift.queueUrl,
      health: queues.health.queueUrl,
    },
    fleetQueueUrl: queues.fleet.queueUrl,
    notifyQueueUrl: queues.notify.queueUrl,
    installationNamespace: namespace,
    logger: logger.child({ component: 'relay' }),
    ...(options.relayTickMs !== undefined ? { tickMs: options.relayTickMs } : {}),
  });

  const stopLoops = async (): Promise<void> => {
    // The relay first: it gives up its leader Lease while the apiserver still answers.
    await relay.stop();
    await Promise.all(pollers.map((p) => p.stop()));
    await rm(cacheDir, { recursive: true, force: true });
    await aws.stop();
    sqs.destroy();
    s3.destroy();
  };

  let api: { url: string; close(): Promise<void> } | undefined;
  if (options.apiPort !== undefined) {
    const app = runtimeApiApp(options, { relayKube, relay, s3, bucket });
    try {
      api = await serveApi(app, { port: options.apiPort });
    } catch (error) {
      // e.g. the port is taken: nothing of this runtime may keep running.
      await stopLoops();
      throw error;
    }
  }

  return {
    awsEndpoint: endpoint,
    queues,
    bucket,
    sqs,
    s3,
    apiUrl: api?.url,
    relay,
    async stop() {
      await api?.close();
      await stopLoops();
    },
  };
}

/** fauxqs on `awsPort`, its SQS and S3 clients, the render bucket and one queue (and DLQ) per loop. */
async function startEmbeddedAws(options: RuntimeOptions): Promise<{
  aws: { stop(): Promise<void> };
  endpoint: string;
  sqs: SQSClient;
  s3: S3Client;
  bucket: string;
  queues: ConvoyRuntime['queues'];
}> {
  const aws = await startFauxqs({ port: options.awsPort ?? 0, logger: false });
  const endpoint = `http://127.0.0.1:${aws.port}`;
  const credentials = { accessKeyId: 'convoy-dev', secretAccessKey: 'convoy-dev' };
  const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials });
  const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  const bucket = 'convoy-renders';
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));

  const queues = {} as ConvoyRuntime['queues'];
  for (const loop of [...LOOPS, FLEET_LOOP, NOTIFY_LOOP] as const) {
    queues[loop] = await ensureQueueWithDlq(sqs, `convoy-${loop}`, {
      maxReceiveCount: options.maxReceiveCount ?? deriveTimings().maxReceiveCount,
      visibilityTimeout: options.visibilityTimeoutSeconds ?? 60,
    });
  }
  return { aws, endpoint, sqs, s3, bucket, queues };
}

/**
 * The four functions' handlers fed by one poller per queue, or, with `options.functions`, what that
 * starts instead (the bundles under the Lambda runtime emulator). Returns what stops them.
 */
async function startFunctions(
  options: RuntimeOptions,
  config: FunctionConfig,
  aws: {
    sqs: SQSClient;
    s3: S3Client;
    endpoint: string;
    queues: ConvoyRuntime['queues'];
    bucket: string;
    settings: Readonly<Record<string, string>>;
  },
): Promise<Poller[]> {
  const { kc, logger } = options;
  const { sqs, s3, endpoint, queues, bucket } = aws;
  // The functions read the installation's settings as on AWS: from their environment, here the relay ConfigMap's entries.
  // One hint key for the three loops of this runtime (they seal and check each other's hints).
  const clients: FunctionClients = {
    kc: fromClientNodeKubeConfig(options.identities?.functions ?? kc),
    sqs,
    s3,
    tenancy: tenancyFromEnv(aws.settings),
    hintKey: hintKey(config.CONVOY_HINT_KEY),
  };
  const queueUrlOf = (loop: MessageLoop) => () => queues[loop].queueUrl;
  const handlers: Partial<Record<MessageLoop, SqsBatchHandler>> = {
    reconcile: createReconcileHandler(config, clients, logger.child({ fn: 'reconcile' }), {
      queueUrlOf: queueUrlOf('reconcile'),
    }),
    ...observerHandlers(config, clients, logger, queueUrlOf),
    fleet: createFleetHandler(config, clients, logger.child({ fn: 'fleet' }), {
      queueUrlOf: queueUrlOf('fleet'),
    }),
    notify: createNotifyHandler(config, clients, logger.child({ fn: 'notify' }), {
      queueUrlOf: queueUrlOf('notify'),
      ...(options.notificationReceiver
        ? {
            deliver: receiverDeliver(options.notificationReceiver, clients.tenancy?.egress),
          }
        : {}),
    }),
  };
  const pollers: Poller[] = [];
  if (options.functions !== undefined) {
    const started = await options.functions({
      sqs,
      endpoint,
      queues,
      bucket,
      functionsKc: options.identities?.functions ?? kc,
      logger,
    });
    pollers.push(started);
  }
  // The lambda runtime (options.functions) runs the construct's four functions instead, the fleet
  // bundle fed by the fleet queue's event source mapping (dev/lambda/lambda-functions.ts).
  // The notify loop runs in process under either: the construct has no notify function yet.
  for (const loop of [...LOOPS, FLEET_LOOP, NOTIFY_LOOP] as const) {
    const handler = handlers[loop];
    if (handler === undefined || (options.functions !== undefined && loop !== NOTIFY_LOOP)) continue;
    pollers.push(
      startPoller({
        sqs,
        queueUrl: queues[loop].queueUrl,
        queueArn: queues[loop].queueArn,
        handler,
        logger: logger.child({ poller: loop }),
        waitTimeSeconds: 1,
        concurrency: options.pollerConcurrency ?? POLLER_CONCURRENCY,
      }),
    );
  }
  return pollers;
}

/** The relay's HTTP API, reading with the relay's identity and the runtime's render store. */
function runtimeApiApp(
  options: RuntimeOptions,
  runtime: { relayKube: KubeClientConfig; relay: Relay; s3: S3Client; bucket: string },
): ReturnType<typeof createApiApp> {
  const { relayKube, relay } = runtime;
  return createApiApp({
    auth: createKubeAuthenticator(relayKube),
    releases: createReleaseApi(relayKube),
    userClusters: userClustersOf(relayKube),
    store: createS3RenderStore({ s3: runtime.s3, bucket: runtime.bucket }),
    metrics: relay.metrics,
    ready: () => relay.ready(),
    gitWebhook: createGitWebhookHandler({
      secret: options.gitWebhookSecret ?? '',
      releases: createKubeWebhookReleaseSource(relayKube, { releaseSets: true }),
      enqueue: (loop, key, cause) => relay.enqueue(loop, key, cause),
      logger: options.logger.child({ component: 'git-webhook' }),
    }),
  });
}

/**
 * The relay's send port, passing on only the messages for Releases in `namespaces`. The others are
 * left out of the answer too, so the sender neither counts them as sent nor retries them.
 */
function onlyNamespaces(sqs: SQSClient, namespaces: readonly string[]): BatchSendPort {
  const allowed = new Set(namespaces);
  const inScope = (body: string | undefined) => {
    const parsed = parseQueueMessage(body ?? '');
    return parsed.ok && allowed.has(parsed.message.namespace);
  };
  return {
    async send(command) {
      const kept = (command.input.Entries ?? []).filter((entry) => inScope(entry.MessageBody));
      if (kept.length === 0) return { Successful: [], Failed: [], $metadata: {} };
      return sqs.send(new SendMessageBatchCommand({ ...command.input, Entries: kept }));
    },
  };
}

async function ensureNamespace(kc: KubeConfig, name: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  try {
    await core.createNamespace({ body: { metadata: { name } } });
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
  }
}
