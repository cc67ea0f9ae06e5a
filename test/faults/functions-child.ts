// The three function handlers behind local pollers, in a process of their own, so a fault
// scenario can kill -9 it mid-wave. Configured by FAULT_CHILD (JSON, see ChildConfig); logs one
// JSON line per log entry on stdout. With `duplicate`, every message the functions send (the
// reconcile's notifications, busy re-sends) is sent twice.
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import type { Loop } from '../../domain/runtime/queue-message.ts';
import { startPoller } from '../../dev/sqs-poller.ts';
import { createDriftHandler } from '../../functions/drift/create-handler.ts';
import { createHealthHandler } from '../../functions/health/create-handler.ts';
import { createReconcileHandler } from '../../functions/reconcile/create-handler.ts';
import { functionEnvSchema } from '../../functions/runtime/config.ts';
import { hintKey } from '../../functions/runtime/applied-hint.ts';
import { createLogger } from '../../platform/logger.ts';
import { tenancyFromEnv } from '../../platform/tenancy-config.ts';
import { duplicating } from './duplicating-sqs.ts';

export interface ChildConfig {
  kubeconfigPath: string;
  endpoint: string;
  namespace: string;
  bucket: string;
  cacheDir: string;
  queues: Record<Loop, { queueUrl: string; queueArn: string }>;
  duplicate: boolean;
  /** CONVOY_EGRESS_ALLOW: the world's Git server (the egress policy refuses any other loopback port). */
  egressAllow: string;
}

const config = JSON.parse(process.env['FAULT_CHILD'] ?? '{}') as ChildConfig;
const credentials = { accessKeyId: 'convoy-dev', secretAccessKey: 'convoy-dev' };
const plainSqs = new SQSClient({ endpoint: config.endpoint, region: 'us-east-1', credentials });
const sqs = config.duplicate ? duplicating(plainSqs) : plainSqs;
const s3 = new S3Client({
  endpoint: config.endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials,
});
const fnConfig = functionEnvSchema.parse({
  CONVOY_NAMESPACE: config.namespace,
  CONVOY_RENDER_BUCKET: config.bucket,
  CONVOY_RECONCILE_QUEUE_URL: config.queues.reconcile.queueUrl,
  CONVOY_DRIFT_QUEUE_URL: config.queues.drift.queueUrl,
  CONVOY_HEALTH_QUEUE_URL: config.queues.health.queueUrl,
  CONVOY_CACHE_DIR: config.cacheDir,
  // The world's key, shared by every functions process as an install's secret is (harness.ts).
  CONVOY_HINT_KEY: process.env['CONVOY_HINT_KEY'],
});
const logger = createLogger({ base: { pid: process.pid }, level: 'info' });
// The installation's hint key: every child of one world seals and checks hints alike.
const clients = {
  kc: fromKubeconfigFile(config.kubeconfigPath),
  sqs,
  s3,
  hintKey: hintKey(fnConfig.CONVOY_HINT_KEY),
  tenancy: tenancyFromEnv({ CONVOY_EGRESS_ALLOW: config.egressAllow }),
};
const queueUrlOf = (loop: Loop) => () => config.queues[loop].queueUrl;
const handlers = {
  reconcile: createReconcileHandler(fnConfig, clients, logger.child({ fn: 'reconcile' }), {
    queueUrlOf: queueUrlOf('reconcile'),
  }),
  drift: createDriftHandler(fnConfig, clients, logger.child({ fn: 'drift' }), {
    queueUrlOf: queueUrlOf('drift'),
  }),
  health: createHealthHandler(fnConfig, clients, logger.child({ fn: 'health' }), {
    queueUrlOf: queueUrlOf('health'),
  }),
};
const pollers = (['reconcile', 'drift', 'health'] as const).map((loop) =>
  startPoller({
    sqs: plainSqs,
    queueUrl: config.queues[loop].queueUrl,
    queueArn: config.queues[loop].queueArn,
    handler: handlers[loop],
    logger: logger.child({ poller: loop }),
    waitTimeSeconds: 1,
  }),
);
process.on('SIGTERM', () => {
  void Promise.all(pollers.map((p) => p.stop())).then(() => process.exit(0));
});
process.stdout.write(`${JSON.stringify({ msg: 'functions ready', pid: process.pid })}\n`);
