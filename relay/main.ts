// The relay as it runs in the management cluster (two replicas, one leader):
// informers → SQS, and the HTTP API. Configuration comes from the environment
// (see infra/relay-manifests.ts for the Deployment that sets it).
import { SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { createS3RenderStore } from '../adapters/store/s3-render-store.ts';
import { describeZodError } from '../domain/api/objects.ts';
import { STRICT_EGRESS } from '../domain/egress/policy.ts';
import { createLogger } from '../platform/logger.ts';
import { onceAsync } from '../platform/once.ts';
import { tenancyFromEnv } from '../platform/tenancy-config.ts';
import { createApiApp, createProbeApp } from './http/app.ts';
import { cachingAuthenticator } from './http/auth-cache.ts';
import { createKubeAuthenticator } from './http/auth.ts';
import { createGitWebhookHandler, createKubeWebhookReleaseSource } from './http/git-hooks.ts';
import { createReleaseApi } from './http/release-api.ts';
import { userClustersOf } from './http/user-cluster.ts';
import { serveApi } from './http/serve.ts';
import { loadTlsFiles } from './http/tls-files.ts';
import { compactHeapWhenReady } from './heap-compaction.ts';
import { loadRelayKubeConfig } from './kube-config.ts';
import { startRelay } from './relay.ts';

const relayEnvSchema = z.object({
  CONVOY_NAMESPACE: z.string().min(1).default('convoy-system'),
  CONVOY_RECONCILE_QUEUE_URL: z.string().url(),
  CONVOY_DRIFT_QUEUE_URL: z.string().url(),
  CONVOY_HEALTH_QUEUE_URL: z.string().url(),
  // The fleet function's queue; unset or empty: the relay does not watch ReleaseSets.
  CONVOY_FLEET_QUEUE_URL: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.string().url().optional(),
  ),
  // The notify function's queue; unset or empty: the relay does not watch Notifications.
  CONVOY_NOTIFY_QUEUE_URL: z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.string().url().optional(),
  ),
  CONVOY_RENDER_BUCKET: z.string().min(1).optional(),
  CONVOY_HTTP_HOST: z.string().default('0.0.0.0'),
  CONVOY_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  CONVOY_HTTPS_PORT: z.coerce.number().int().min(0).max(65535).default(8443),
  CONVOY_TLS_CERT_FILE: z.string().optional(),
  CONVOY_TLS_KEY_FILE: z.string().optional(),
  CONVOY_GIT_WEBHOOK_SECRET: z.string().optional(),
  CONVOY_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  // Off unless the install grants list/watch on Secrets (relay-manifests.ts watchSecrets).
  CONVOY_WATCH_SECRETS: z.enum(['true', 'false']).default('false'),
  // /metrics needs no token: the series naming each Release and ReleaseSet only when asked for.
  CONVOY_METRICS_PER_RELEASE: z.enum(['true', 'false']).default('false'),
  AWS_REGION: z.string().default('us-east-1'),
  AWS_ENDPOINT_URL: z.string().url().optional(),
});

async function main(): Promise<void> {
  const parsed = relayEnvSchema.safeParse(process.env);
  if (!parsed.success) throw new Error(`relay environment is invalid: ${describeZodError(parsed.error)}`);
  const env = parsed.data;
  const logger = createLogger({ base: { app: 'convoy-relay' }, level: env.CONVOY_LOG_LEVEL });
  // The installation's settings are the functions' too (same ConfigMap entries, same parser): a
  // malformed one stops the relay at start, naming the variable, rather than only the functions.
  const tenancy = tenancyFromEnv(process.env);
  logger.info('installation settings', {
    defaultServiceAccount: tenancy.defaultServiceAccount ?? "(the functions' identity)",
    inClusterNamespaces:
      tenancy.inClusterNamespaces === 'all' ? '*' : [...tenancy.inClusterNamespaces].join(','),
    crossNamespaceRefs: tenancy.crossNamespaceRefs,
    tenantNamespaces: process.env['CONVOY_TENANT_NAMESPACES'] ?? '',
    watchSecrets: env.CONVOY_WATCH_SECRETS === 'true',
    metricsPerRelease: env.CONVOY_METRICS_PER_RELEASE === 'true',
    fleet: env.CONVOY_FLEET_QUEUE_URL !== undefined,
  });
  const kube = await loadRelayKubeConfig();
  const aws = { region: env.AWS_REGION, ...(env.AWS_ENDPOINT_URL ? { endpoint: env.AWS_ENDPOINT_URL } : {}) };
  const sqs = new SQSClient(aws);
  const relay = startRelay({
    kube,
    sqs,
    queueUrls: {
      reconcile: env.CONVOY_RECONCILE_QUEUE_URL,
      drift: env.CONVOY_DRIFT_QUEUE_URL,
      health: env.CONVOY_HEALTH_QUEUE_URL,
    },
    installationNamespace: env.CONVOY_NAMESPACE,
    logger,
    watchSecrets: env.CONVOY_WATCH_SECRETS === 'true',
    fleetQueueUrl: env.CONVOY_FLEET_QUEUE_URL,
    notifyQueueUrl: env.CONVOY_NOTIFY_QUEUE_URL,
  });
  const compaction = compactHeapWhenReady(() => relay.ready() && relay.leading(), logger);
  // The S3 SDK loads on the first request that reads the render store (pin, diff): ~6 MiB of the
  // relay's RSS at rest otherwise (the store already takes a client made on first use).
  const s3 = onceAsync(async () => {
    const { S3Client } = await import('@aws-sdk/client-s3');
    return new S3Client({ ...aws, forcePathStyle: env.AWS_ENDPOINT_URL !== undefined });
  });
  const store = env.CONVOY_RENDER_BUCKET
    ? createS3RenderStore({ s3, bucket: env.CONVOY_RENDER_BUCKET })
    : undefined;
  const app = createApiApp({
    auth: cachingAuthenticator(createKubeAuthenticator(kube)),
    releases: createReleaseApi(kube),
    // A remote Cluster's kubeconfig server is a tenant's choice: reached only as the egress policy allows.
    userClusters: userClustersOf(kube, { policy: tenancy.egress ?? STRICT_EGRESS }),
    ...(store ? { store } : {}),
    metrics: relay.metrics,
    metricsPerRelease: env.CONVOY_METRICS_PER_RELEASE === 'true',
    ready: () => relay.ready(),
    gitWebhook: createGitWebhookHandler({
      secret: env.CONVOY_GIT_WEBHOOK_SECRET ?? '',
      releases: createKubeWebhookReleaseSource(kube, {
        releaseSets: env.CONVOY_FLEET_QUEUE_URL !== undefined,
      }),
      enqueue: (loop, key, cause) => relay.enqueue(loop, key, cause),
      logger,
    }),
  });
  const hostname = env.CONVOY_HTTP_HOST;
  const tls = await loadTlsFiles(env.CONVOY_TLS_CERT_FILE, env.CONVOY_TLS_KEY_FILE);
  if (tls.kind === 'missing') logger.warn(`relay: ${tls.message}`);
  // With TLS, everything that carries a token is on HTTPS; the plain port keeps only probes and metrics.
  const servers =
    tls.kind === 'on'
      ? [
          await serveApi(app, { port: env.CONVOY_HTTPS_PORT, hostname, tls }),
          await serveApi(
            createProbeApp({
              metrics: relay.metrics,
              metricsPerRelease: env.CONVOY_METRICS_PER_RELEASE === 'true',
              ready: () => relay.ready(),
            }),
            { port: env.CONVOY_HTTP_PORT, hostname },
          ),
        ]
      : [await serveApi(app, { port: env.CONVOY_HTTP_PORT, hostname })];
  logger.info('relay started', { api: servers[0]?.url, ...(servers[1] ? { probes: servers[1].url } : {}) });
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  compaction.stop();
  await Promise.all(servers.map((s) => s.close()));
  await relay.stop();
}

await main();
