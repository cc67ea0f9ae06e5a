/**
 * `new Convoy(scope, id, props)`: convoy on AWS (ARCHITECTURE.md, "Many machines: AWS").
 *
 * - four standard SQS queues (reconcile, drift, health, fleet), each with a dead-letter queue;
 * - four Node.js 24 Lambda functions bundled with esbuild from functions/<loop>/handler.ts,
 *   fed by event source mappings with ReportBatchItemFailures and maximum concurrency (the
 *   fleet function, the ReleaseSet loop of issue 26: infra/fleet-function.ts);
 * - the render-store bucket (KMS, versioning off, public access blocked, TLS only);
 * - the helm/kubectl layer on the reconcile function;
 * - the functions' hint key: a generated secret the three functions read at init (function-hint-key.ts);
 * - IAM for the functions and for the relay (EKS Pod Identity), scoped to what the code calls
 *   (infra/function-iam.ts: cdk-nag AwsSolutionsChecks clean, each remaining wildcard acknowledged
 *   with its reason);
 * - alarms on function errors and throttles, queue age and dead-letter queue depth (SNS topic option);
 * - with `cluster`: the relay manifests installed on that EKS cluster and its Pod Identity wired;
 * - optional VPC placement of the functions (private EKS endpoints);
 * - timings from domain/runtime/timings.ts: function timeout, queue visibility (6 × it),
 *   maxReceiveCount (covering maxWaveTimeout at 10-s rechecks), checked against each other and
 *   against the functions' 60-s Lease at synth (ConvoyConfigError names the props and the rule);
 * - outputs: queue URLs, bucket name, relay role ARN, relay manifests.
 */
import { ESM_BANNER } from './esm-banner.ts';
import { functionAlarms } from './function-alarms.ts';
import { defaultEntry, loopFunction, PACKAGE_ROOT } from './function-code.ts';
import { functionRole, grantRenderStore } from './function-iam.ts';
import { queueAlarms } from './queue-alarms.ts';
import { RelayImage } from './relay-image.ts';
import { installRelayManifests } from './relay-install.ts';
import { functionAccessEnvironment, grantFunctionAccess } from './function-access.ts';
import { grantHintKey, HINT_KEY_SECRET_VARIABLE, hintKeySecret } from './function-hint-key.ts';
import { grantEcrPull } from './ecr-access.ts';
import { relayRole } from './relay-role.ts';
import { DEFAULT_FLEET_BATCH_SIZE, DEFAULT_MEMORY_MB, type ConvoyProps } from './convoy-props.ts';
import { fleetFunction, FleetFunctionError, FLEET_QUEUE_URL_VARIABLE } from './fleet-function.ts';
import { renderLimitEnvironment, renderLimitProblem } from './render-limits.ts';
import { renderStoreBucket } from './render-store-bucket.ts';
import { conflictingProps, ConvoyConfigError, maxConcurrencyOf, timingsOf } from './convoy-config-checks.ts';

export type { ConvoyProps, ConvoyRetentionProps } from './convoy-props.ts';
export { ConvoyConfigError, DEFAULT_FLEET_BATCH_SIZE, DEFAULT_MEMORY_MB, FLEET_QUEUE_URL_VARIABLE };
import { KubectlV36Layer } from '@aws-cdk/lambda-layer-kubectl-v36';
import { Annotations, CfnOutput, Duration, RemovalPolicy, Size, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { deriveTimings } from '../domain/runtime/timings.ts';
import { FLEET_LOOP, LOOPS, QUEUE_LOOPS, type Loop, type QueueLoop } from '../domain/runtime/queue-message.ts';
import {
  DEFAULT_INSTALLATION_NAMESPACE,
  RELAY_SERVICE_ACCOUNT,
  relayManifests,
  type KubeManifest,
} from './relay-manifests.ts';

export {
  loadCrds,
  manifestsToYaml,
  relayManifests,
  type KubeManifest,
  type RelayManifestOptions,
} from './relay-manifests.ts';

export { FLEET_LOOP, LOOPS, QUEUE_LOOPS, type Loop, type QueueLoop };

/** Root of this package: the repository, or node_modules/convoy of an installed copy. */
export const REPO_ROOT = PACKAGE_ROOT;

export { defaultEntry, RelayImage };

/**
 * Receives before a message is dead-lettered by default, derived from the default longest wait
 * (domain/runtime/timings.ts): the wave, cluster-wave and hook waits requeue the same message every
 * 10 s and every redelivery counts as a receive, so a 30-min wait is 180 of them plus headroom.
 */
export const DEFAULT_MAX_RECEIVE_COUNT = deriveTimings().maxReceiveCount;

export { ESM_BANNER };

/** The queue each loop sends to besides its own (functions/runtime/notifier.ts). */
const SENDS_TO: Record<Loop, readonly Loop[]> = {
  reconcile: ['drift', 'health'],
  drift: ['reconcile'],
  health: [],
};

export class Convoy extends Construct {
  readonly queues: Readonly<Record<QueueLoop, sqs.Queue>>;
  readonly deadLetterQueues: Readonly<Record<QueueLoop, sqs.Queue>>;
  /** The three Release functions and the fleet function (ReleaseSets). */
  readonly functions: Readonly<Record<QueueLoop, lambda.Function>>;
  readonly renderBucket: s3.Bucket;
  readonly key: kms.Key;
  /** The functions' hint key (functions/runtime/applied-hint.ts): generated, read by the three Release functions at init. */
  readonly hintKeySecret: secretsmanager.Secret;
  readonly kubectlLayer: lambda.ILayerVersion;
  readonly relayRole: iam.Role;
  readonly alarms: readonly cloudwatch.Alarm[];
  /** The relay's manifests (CRDs first); queue URLs and the bucket name are tokens. */
  readonly relayManifests: readonly KubeManifest[];
  readonly installationNamespace: string;

  constructor(scope: Construct, id: string, props: ConvoyProps = {}) {
    super(scope, id);
    const namespace = props.installationNamespace ?? DEFAULT_INSTALLATION_NAMESPACE;
    this.installationNamespace = namespace;
    const timings = timingsOf(id, props);
    const timeout = Duration.seconds(timings.functionTimeoutSeconds);
    const visibility = Duration.seconds(timings.visibilityTimeoutSeconds);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    if (props.kubeconfigSecret !== undefined && props.kubeconfigPath !== undefined) {
      throw new ConvoyConfigError(`Convoy ${id}: give kubeconfigSecret or kubeconfigPath, not both`);
    }
    conflictingProps(id, props);
    const limitProblem = renderLimitProblem(props);
    if (limitProblem !== undefined) throw new ConvoyConfigError(`Convoy ${id}: ${limitProblem}`);
    if (props.kubeconfigSecret === undefined && props.kubeconfigPath === undefined && props.cluster === undefined) {
      Annotations.of(this).addWarningV2(
        'convoy:noKubeconfig',
        'Convoy: neither kubeconfigSecret nor kubeconfigPath is set, so the functions cannot reach the management cluster',
      );
    }

    this.key = new kms.Key(this, 'Key', {
      description: 'convoy: render store (renders hold Secret objects) and function environment',
      enableKeyRotation: true,
      removalPolicy,
    });

    // --- Queues --------------------------------------------------------------------------------
    const maxReceiveCount = timings.maxReceiveCount;
    const queues = {} as Record<QueueLoop, sqs.Queue>;
    const dlqs = {} as Record<QueueLoop, sqs.Queue>;
    for (const loop of QUEUE_LOOPS) {
      const name = capitalize(loop);
      dlqs[loop] = new sqs.Queue(this, `${name}DeadLetterQueue`, {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      queues[loop] = new sqs.Queue(this, `${name}Queue`, {
        // Standard, not FIFO: a new event must not wait behind a message that is backing off.
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: visibility,
        retentionPeriod: Duration.days(4),
        deadLetterQueue: { queue: dlqs[loop], maxReceiveCount },
      });
    }
    this.queues = queues;
    this.deadLetterQueues = dlqs;

    // --- Render store --------------------------------------------------------------------------
    this.renderBucket = renderStoreBucket(this, {
      key: this.key,
      removalPolicy,
      retention: props.retention,
      serverAccessLogsBucket: props.serverAccessLogsBucket,
    });

    // The functions' hint key, read by each container at init (function-hint-key.ts).
    this.hintKeySecret = hintKeySecret(this, { key: this.key, removalPolicy });

    // --- Functions -----------------------------------------------------------------------------
    this.kubectlLayer = new KubectlV36Layer(this, 'KubectlLayer');
    const environment: Record<string, string> = {
      CONVOY_NAMESPACE: namespace,
      CONVOY_RENDER_BUCKET: this.renderBucket.bucketName,
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
    // The secret's ARN, not its value: each container reads it at init (functions/runtime/clients.ts).
    const releaseEnvironment = { ...environment, [HINT_KEY_SECRET_VARIABLE]: this.hintKeySecret.secretArn };
    const common = {
      ...(props.vpc !== undefined
        ? {
            vpc: props.vpc,
            ...(props.vpcSubnets !== undefined ? { vpcSubnets: props.vpcSubnets } : {}),
            ...(props.securityGroups !== undefined ? { securityGroups: props.securityGroups } : {}),
          }
        : {}),
      runtime: lambda.Runtime.NODEJS_24_X,
      // The kubectl layer's helm and kubectl are linux/amd64 binaries.
      architecture: lambda.Architecture.X86_64,
      timeout,
      environmentEncryption: this.key,
    };

    const functions = {} as Record<QueueLoop, lambda.Function>;
    for (const loop of LOOPS) {
      const name = capitalize(loop);
      const logGroup = new logs.LogGroup(this, `${name}Logs`, {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const role = functionRole(this, `${name}Role`, { logGroup, vpc: props.vpc !== undefined, description: `convoy ${loop} function` });
      functions[loop] = loopFunction(this, `${name}Function`, loop, props.entries?.[loop], {
        ...common,
        description: `convoy ${loop} loop`,
        role,
        memorySize: props.memorySize?.[loop] ?? DEFAULT_MEMORY_MB[loop],
        ephemeralStorageSize: loop === 'reconcile' ? Size.mebibytes(2048) : undefined,
        environment: loop === 'reconcile' ? { ...releaseEnvironment, ...renderLimitEnvironment(props) } : releaseEnvironment,
        logGroup,
        layers: loop === 'reconcile' ? [this.kubectlLayer] : [],
      });
      functions[loop].addEventSource(
        new SqsEventSource(queues[loop], {
          batchSize: 10,
          reportBatchItemFailures: true,
          maxConcurrency: maxConcurrencyOf(props.maxConcurrency, loop),
        }),
      );
    }
    // The ReleaseSet loop (issue 26): its own queue, function, role and alarms.
    try {
      functions[FLEET_LOOP] = fleetFunction(this, {
        queue: queues[FLEET_LOOP],
        environment,
        store: { bucket: this.renderBucket, key: this.key },
        common,
        vpc: props.vpc !== undefined,
        memorySize: props.memorySize?.[FLEET_LOOP] ?? DEFAULT_MEMORY_MB[FLEET_LOOP],
        entry: props.entries?.[FLEET_LOOP],
        batchSize: props.fleetBatchSize,
        maxConcurrency: maxConcurrencyOf(props.maxConcurrency, FLEET_LOOP),
        ecrRepositories: props.ecrRepositories,
      });
    } catch (error) {
      if (error instanceof FleetFunctionError) throw new ConvoyConfigError(`Convoy ${id}: ${error.message}`);
      throw error;
    }
    this.functions = functions;

    // --- IAM: functions ------------------------------------------------------------------------
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
    const store = { bucket: this.renderBucket, key: this.key };
    grantRenderStore(functions.reconcile, store, 'readwrite');
    grantRenderStore(functions.drift, store, 'read');
    grantRenderStore(functions.health, store, 'read');
    grantFunctionAccess(this, functions, props);
    grantHintKey(this.hintKeySecret, functions);
    if (functions.reconcile.role !== undefined) grantEcrPull(functions.reconcile.role, props.ecrRepositories);

    // --- IAM: relay (EKS Pod Identity) ---------------------------------------------------------
    this.relayRole = relayRole(this, {
      namespace,
      serviceAccount: RELAY_SERVICE_ACCOUNT,
      ...(props.managementClusterName !== undefined ? { clusterName: props.managementClusterName } : {}),
      ...(props.cluster !== undefined ? { clusterName: props.cluster.clusterName } : {}),
    });
    for (const loop of QUEUE_LOOPS) queues[loop].grantSendMessages(this.relayRole);
    grantRenderStore(this.relayRole, store, 'read');

    // --- Alarms --------------------------------------------------------------------------------
    this.alarms = [
      ...functionAlarms(this, { functions, ...(props.alarmsTopic ? { topic: props.alarmsTopic } : {}) }),
      ...queueAlarms(this, {
      queues,
      dlqs,
      maxReceiveCount,
      ageThreshold: props.queueAgeAlarmThreshold ?? Duration.minutes(15),
        ...(props.alarmsTopic ? { topic: props.alarmsTopic } : {}),
      }),
    ];

    // --- Relay manifests and outputs -----------------------------------------------------------
    this.relayManifests = relayManifests({
      namespace,
      queueUrls: {
        reconcile: queues.reconcile.queueUrl,
        drift: queues.drift.queueUrl,
        health: queues.health.queueUrl,
        fleet: queues.fleet.queueUrl,
      },
      region: Stack.of(this).region,
      renderBucket: this.renderBucket.bucketName,
      ...(props.relayImage !== undefined
        ? { image: typeof props.relayImage === 'string' ? props.relayImage : props.relayImage.bind(this) }
        : {}),
      ...(props.logLevel !== undefined ? { logLevel: props.logLevel } : {}),
      ...(props.tenancy !== undefined ? { tenancy: props.tenancy } : {}),
    });
    if (props.cluster !== undefined) installRelayManifests(this, props.cluster, this.relayManifests);

    if (props.outputs ?? true) {
      for (const loop of QUEUE_LOOPS) {
        new CfnOutput(this, `${capitalize(loop)}QueueUrl`, {
          value: queues[loop].queueUrl,
          description: `CONVOY_${loop.toUpperCase()}_QUEUE_URL`,
        });
      }
      new CfnOutput(this, 'RenderBucketName', {
        value: this.renderBucket.bucketName,
        description: 'CONVOY_RENDER_BUCKET',
      });
      new CfnOutput(this, 'RelayRoleArn', {
        value: this.relayRole.roleArn,
        description: 'IAM role of the relay (EKS Pod Identity)',
      });
      // The CRDs (~70 KB) stay out of the template: apply config/crds/ (or relayManifests() with its default crds) first.
      const withoutCrds = this.relayManifests.filter((m) => m.kind !== 'CustomResourceDefinition');
      new CfnOutput(this, 'RelayManifests', {
        value: Stack.of(this).toJsonString({ apiVersion: 'v1', kind: 'List', items: withoutCrds }),
        description:
          'Relay Namespace, ServiceAccount, RBAC, Deployment, Service as a v1 List (kubectl apply -f); CRDs: kubectl apply -f config/crds/',
      });
    }
  }
}

function capitalize(loop: QueueLoop): string {
  return loop.charAt(0).toUpperCase() + loop.slice(1);
}
