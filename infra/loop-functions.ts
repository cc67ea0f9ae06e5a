/**
 * The Convoy construct's loops: one standard SQS queue with a dead-letter queue per loop, the
 * three Release functions and the fleet function fed by them, and the functions' IAM (which
 * queues each sends to, the render store, the hint key, management-cluster access, ECR pulls).
 * Construct ids and the order things are made in are the construct's: they name the template's
 * resources and order its policy statements.
 */
import { Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import {
  FLEET_LOOP,
  LOOPS,
  QUEUE_LOOPS,
  type Loop,
  type QueueLoop,
} from '../domain/runtime/queue-message.ts';
import { ConvoyConfigError, maxConcurrencyOf } from './convoy-config-checks.ts';
import { DEFAULT_MEMORY_MB, type ConvoyProps } from './convoy-props.ts';
import { grantEcrPull } from './ecr-access.ts';
import { fleetFunction, FleetFunctionError, type FleetFunctionProps } from './fleet-function.ts';
import { functionAccessEnvironment, grantFunctionAccess } from './function-access.ts';
import { loopFunction } from './function-code.ts';
import { latestNodeRuntime } from './node-runtime.ts';
import { grantHintKey, HINT_KEY_SECRET_VARIABLE } from './function-hint-key.ts';
import { functionRole, grantRenderStore } from './function-iam.ts';
import { renderLimitEnvironment } from './render-limits.ts';

/** The queue each loop sends to besides its own (functions/runtime/notifier.ts). */
const SENDS_TO: Record<Loop, readonly Loop[]> = {
  reconcile: ['drift', 'health'],
  drift: ['reconcile'],
  health: [],
};

export interface LoopQueues {
  readonly queues: Record<QueueLoop, sqs.Queue>;
  readonly dlqs: Record<QueueLoop, sqs.Queue>;
}

/** The render store: the bucket and the key that encrypts it. */
export interface RenderStore {
  readonly bucket: s3.Bucket;
  readonly key: kms.Key;
}

/** `Reconcile` for `reconcile`: the loop's part of construct ids. */
export function capitalize(loop: QueueLoop): string {
  return loop.charAt(0).toUpperCase() + loop.slice(1);
}

/** Per loop a dead-letter queue, then its queue redriving to it after `maxReceiveCount` receives. */
export function loopQueues(
  scope: Construct,
  props: { visibilityTimeout: Duration; maxReceiveCount: number },
): LoopQueues {
  const queues = {} as Record<QueueLoop, sqs.Queue>;
  const dlqs = {} as Record<QueueLoop, sqs.Queue>;
  for (const loop of QUEUE_LOOPS) {
    const name = capitalize(loop);
    dlqs[loop] = new sqs.Queue(scope, `${name}DeadLetterQueue`, {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    queues[loop] = new sqs.Queue(scope, `${name}Queue`, {
      // Standard, not FIFO: a new event must not wait behind a message that is backing off.
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: dlqs[loop], maxReceiveCount: props.maxReceiveCount },
    });
  }
  return { queues, dlqs };
}

/** The environment every function gets (the Release functions add the hint key's ARN). */
function functionEnvironment(
  props: ConvoyProps,
  namespace: string,
  bucket: s3.Bucket,
  queues: LoopQueues['queues'],
): Record<string, string> {
  return {
    CONVOY_NAMESPACE: namespace,
    CONVOY_RENDER_BUCKET: bucket.bucketName,
    CONVOY_RECONCILE_QUEUE_URL: queues.reconcile.queueUrl,
    CONVOY_DRIFT_QUEUE_URL: queues.drift.queueUrl,
    CONVOY_HEALTH_QUEUE_URL: queues.health.queueUrl,
    // CONVOY_FLEET_QUEUE_URL: the fleet function's only (fleet-function.ts); no Release function sends there.
    CONVOY_CACHE_DIR: '/tmp/convoy',
    CONVOY_LOG_LEVEL: props.logLevel ?? 'info',
    NODE_OPTIONS: '--enable-source-maps',
    // Names, public endpoints and tenancy settings only: no kubeconfig or token (function-access.ts).
    ...functionAccessEnvironment(props, namespace),
    ...(props.kubeconfigPath !== undefined ? { CONVOY_KUBECONFIG_PATH: props.kubeconfigPath } : {}),
    // AWS_REGION is set by Lambda itself (and reserved: it may not be set here).
  };
}

/** What the four functions share: VPC placement, runtime, architecture, timeout, environment encryption. */
function commonFunctionProps(
  props: ConvoyProps,
  timeout: Duration,
  key: kms.Key,
): FleetFunctionProps['common'] {
  return {
    ...(props.vpc !== undefined
      ? {
          vpc: props.vpc,
          ...(props.vpcSubnets !== undefined ? { vpcSubnets: props.vpcSubnets } : {}),
          ...(props.securityGroups !== undefined ? { securityGroups: props.securityGroups } : {}),
        }
      : {}),
    // The newest Node.js runtime the installed aws-cdk-lib knows (node-runtime.ts): cdk-nag's L1 asks for it.
    runtime: latestNodeRuntime(),
    // The kubectl layer's helm and kubectl are linux/amd64 binaries.
    architecture: lambda.Architecture.X86_64,
    timeout,
    environmentEncryption: key,
  };
}

export interface LoopFunctionsProps {
  /** The construct's id, for the messages of props it refuses. */
  readonly id: string;
  readonly namespace: string;
  readonly queues: LoopQueues['queues'];
  readonly store: RenderStore;
  readonly hintKeySecret: secretsmanager.Secret;
  /** helm and kubectl, for the reconcile function. */
  readonly kubectlLayer: lambda.ILayerVersion;
  readonly timeout: Duration;
}

/**
 * The three Release functions, each with its log group, role and event source mapping on its
 * queue, then the fleet function (the ReleaseSet loop: its own queue, function, role and alarms).
 */
export function loopFunctions(
  scope: Construct,
  props: ConvoyProps,
  loops: LoopFunctionsProps,
): Record<QueueLoop, lambda.Function> {
  const { queues, store } = loops;
  const environment = functionEnvironment(props, loops.namespace, store.bucket, queues);
  // The secret's ARN, not its value: each container reads it at init (functions/runtime/clients.ts).
  const releaseEnvironment = { ...environment, [HINT_KEY_SECRET_VARIABLE]: loops.hintKeySecret.secretArn };
  const common = commonFunctionProps(props, loops.timeout, store.key);

  const functions = {} as Record<QueueLoop, lambda.Function>;
  for (const loop of LOOPS) {
    const name = capitalize(loop);
    const logGroup = new logs.LogGroup(scope, `${name}Logs`, {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const role = functionRole(scope, `${name}Role`, {
      logGroup,
      vpc: props.vpc !== undefined,
      description: `convoy ${loop} function`,
    });
    functions[loop] = loopFunction(scope, `${name}Function`, loop, props.entries?.[loop], {
      ...common,
      description: `convoy ${loop} loop`,
      role,
      memorySize: props.memorySize?.[loop] ?? DEFAULT_MEMORY_MB[loop],
      ephemeralStorageSize: loop === 'reconcile' ? Size.mebibytes(2048) : undefined,
      environment:
        loop === 'reconcile'
          ? { ...releaseEnvironment, ...renderLimitEnvironment(props) }
          : releaseEnvironment,
      logGroup,
      layers: loop === 'reconcile' ? [loops.kubectlLayer] : [],
    });
    functions[loop].addEventSource(
      new SqsEventSource(queues[loop], {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: maxConcurrencyOf(props.maxConcurrency, loop),
      }),
    );
  }
  try {
    functions[FLEET_LOOP] = fleetFunction(scope, {
      queue: queues[FLEET_LOOP],
      environment,
      store,
      common,
      vpc: props.vpc !== undefined,
      memorySize: props.memorySize?.[FLEET_LOOP] ?? DEFAULT_MEMORY_MB[FLEET_LOOP],
      entry: props.entries?.[FLEET_LOOP],
      batchSize: props.fleetBatchSize,
      maxConcurrency: maxConcurrencyOf(props.maxConcurrency, FLEET_LOOP),
      ecrRepositories: props.ecrRepositories,
    });
  } catch (error) {
    if (error instanceof FleetFunctionError)
      throw new ConvoyConfigError(`Convoy ${loops.id}: ${error.message}`);
    throw error;
  }
  return functions;
}

/** The Release functions' IAM: the queues they send to, the dead-letter queues, the render store, the hint key, the clusters, ECR. */
export function grantLoopAccess(
  scope: Construct,
  functions: Record<QueueLoop, lambda.Function>,
  access: LoopQueues & { store: RenderStore; hintKeySecret: secretsmanager.Secret; props: ConvoyProps },
): void {
  const { queues, dlqs, store, props } = access;
  // Consuming (the event source) already grants receive/delete/ChangeMessageVisibility on its own queue,
  // not SendMessage: a run that finds its Lease busy waits as a NEW message on its own queue (the
  // lease guard's waitAsNewMessage → sqs-batch-handler.ts resend), so that is granted too.
  for (const loop of LOOPS) {
    for (const target of [loop, ...SENDS_TO[loop]]) queues[target].grantSendMessages(functions[loop]);
  }
  // Every loop reads the reconcile queue's backlog to wait out a burst (functions/runtime/burst-guard.ts):
  // reconcile consumes it and drift sends to it (both grants include GetQueueAttributes); health only reads it.
  queues.reconcile.grant(functions.health, 'sqs:GetQueueAttributes');
  // A message that can never succeed is copied to the function's own dead-letter queue at its first
  // receive (adapters/sqs/dead-letter.ts: its queue's RedrivePolicy names it, GetQueueUrl finds it).
  for (const loop of QUEUE_LOOPS) dlqs[loop].grantSendMessages(functions[loop]);
  grantRenderStore(functions.reconcile, store, 'readwrite');
  grantRenderStore(functions.drift, store, 'read');
  grantRenderStore(functions.health, store, 'read');
  grantFunctionAccess(scope, functions, props);
  grantHintKey(access.hintKeySecret, functions);
  if (functions.reconcile.role !== undefined) grantEcrPull(functions.reconcile.role, props.ecrRepositories);
}
