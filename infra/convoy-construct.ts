/**
 * `new Convoy(scope, id, props)`: convoy on AWS (ARCHITECTURE.md, "Many machines: AWS").
 *
 * - three standard SQS queues (reconcile, drift, health), each with a dead-letter queue;
 * - three Node.js 24 Lambda functions bundled with esbuild from functions/<loop>/handler.ts,
 *   fed by event source mappings with ReportBatchItemFailures and maximum concurrency;
 * - the render-store bucket (KMS, versioning off, public access blocked, TLS only);
 * - the helm/kubectl layer on the reconcile function;
 * - IAM for the functions and for the relay (EKS Pod Identity), scoped to what the code calls
 *   (infra/function-iam.ts: cdk-nag AwsSolutionsChecks clean, each remaining wildcard acknowledged
 *   with its reason);
 * - alarms on function errors and throttles, queue age and dead-letter queue depth (SNS topic option);
 * - with `cluster`: the relay manifests installed on that EKS cluster and its Pod Identity wired;
 * - optional VPC placement of the functions (private EKS endpoints);
 * - outputs: queue URLs, bucket name, relay role ARN, relay manifests.
 */
import { ESM_BANNER } from './esm-banner.ts';
import { functionAlarms } from './function-alarms.ts';
import { defaultEntry, loopFunction, PACKAGE_ROOT } from './function-code.ts';
import { acknowledge, functionRole, grantRenderStore } from './function-iam.ts';
import { queueAlarms } from './queue-alarms.ts';
import { RelayImage } from './relay-image.ts';
import { installRelayManifests } from './relay-install.ts';
import { functionAccessEnvironment, grantFunctionAccess, type EksTargetsProps } from './function-access.ts';
import { relayRole } from './relay-role.ts';
import { KubectlV36Layer } from '@aws-cdk/lambda-layer-kubectl-v36';
import { Annotations, CfnOutput, Duration, RemovalPolicy, Size, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as eks from 'aws-cdk-lib/aws-eks';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { MAX_LEASE_SECONDS } from '../domain/runtime/lease.ts';
import { LOOPS, type Loop } from '../domain/runtime/queue-message.ts';
import {
  DEFAULT_INSTALLATION_NAMESPACE,
  RELAY_SERVICE_ACCOUNT,
  relayManifests,
  type KubeManifest,
  type TenancyManifestOptions,
} from './relay-manifests.ts';

export {
  loadCrds,
  manifestsToYaml,
  relayManifests,
  type KubeManifest,
  type RelayManifestOptions,
} from './relay-manifests.ts';

export { LOOPS, type Loop };

/** Root of this package: the repository, or node_modules/convoy of an installed copy. */
export const REPO_ROOT = PACKAGE_ROOT;

export { defaultEntry, RelayImage };

/**
 * Added to the function timeout for the queues' visibility timeout: a record
 * whose invocation timed out comes back only after its Lease has expired (the
 * Lease lasts MAX_LEASE_SECONDS and is renewed by a heartbeat while the run
 * lives, so it expires at most a minute after the invocation died), so the
 * next run can take it.
 */
export const TIMEOUT_MARGIN = Duration.seconds(30);

/**
 * The wave, hook and cluster-wave waits requeue the same message every 10 s
 * (ChangeMessageVisibility + batchItemFailures), and every redelivery counts
 * as a receive; so do busy-Lease requeues (1–3 s) and backoff retries. A
 * small maxReceiveCount would move a Release that is merely waiting — a 5 min
 * waveTimeout alone is ~30 receives — to the DLQ. 100 receives is ~17 min of
 * 10 s rechecks, or about a day of retries at the 1000 s backoff ceiling.
 */
export const DEFAULT_MAX_RECEIVE_COUNT = 100;

export interface ConvoyRetentionProps {
  /**
   * Backstop: an S3 lifecycle rule that expires every render object older than
   * this. Off by default, because it can delete renders the store protects
   * (lastSuccessful, lastHealthy, a rollout or a pin): the store keeps an
   * unchanged render's first write time, so the render of a Release that has
   * not changed for this long is expired too and drift/health/pin lose it.
   * Set it well above every Release's `spec.retentionPolicy.maxAge` (default 720h).
   */
  readonly expireRendersAfter?: Duration;
}

export interface ConvoyProps {
  /**
   * Name of the EKS management cluster. When set, an EKS Pod Identity
   * association binds the relay role to the relay ServiceAccount
   * (installationNamespace/convoy-relay), and the role's trust policy accepts
   * only that cluster. Without it, create the association (or IRSA) yourself.
   */
  readonly managementClusterName?: string;
  /**
   * Secrets Manager secret whose SecretString is the management cluster's kubeconfig YAML, for a
   * management cluster the construct cannot reach through EKS access (`cluster`). The functions
   * get its ARN (never its value) and read it at run time, re-reading its token every 5 minutes,
   * so a rotation needs no redeploy (infra/function-access.ts). Give none of cluster, this or
   * kubeconfigPath and the functions have no way to reach the management cluster (a synth warning says so).
   */
  readonly kubeconfigSecret?: secretsmanager.ISecret;
  /** The installation's tenancy settings (docs/security.md); default: defaultServiceAccount "default", inCluster only in the installation namespace, no cross-namespace references. */
  readonly tenancy?: TenancyManifestOptions;
  /** EKS target clusters (Clusters with spec.eks): what the functions may describe and which roles they may assume. */
  readonly eksTargets?: EksTargetsProps;
  /** Path of a kubeconfig inside the function (e.g. from a layer of your own): CONVOY_KUBECONFIG_PATH. */
  readonly kubeconfigPath?: string;
  /** Namespace of the Leases and of the relay (CONVOY_NAMESPACE); default convoy-system. */
  readonly installationNamespace?: string;
  /** Timeout of all three functions; default 15 min. Queue visibility is this + 30 s; Leases last 60 s, renewed while a run lives. */
  readonly functionTimeout?: Duration;
  /**
   * Maximum concurrent invocations per event source mapping (2–1000), one number for all
   * three or one per loop; default 10 each. The design limit is the management
   * cluster's API server, not Lambda: raise with care.
   */
  readonly maxConcurrency?: number | Partial<Record<Loop, number>>;
  /** Receives before a message moves to its dead-letter queue; default 100 (see DEFAULT_MAX_RECEIVE_COUNT). */
  readonly maxReceiveCount?: number;
  /** Render-store lifecycle backstop; retention itself is per Release (spec.retentionPolicy), done by the functions. */
  readonly retention?: ConvoyRetentionProps;
  /** Alarm and OK actions of every alarm go here. */
  readonly alarmsTopic?: sns.ITopic;
  /** Alarm when a queue's oldest message is older than this; default 15 min. */
  readonly queueAgeAlarmThreshold?: Duration;
  /** Entry file per loop; default functions/<loop>/handler.ts of this repository. */
  readonly entries?: Partial<Record<Loop, string>>;
  /** Memory per loop in MB; defaults reconcile 1024 (helm, kustomize), drift 512, health 512. */
  readonly memorySize?: Partial<Record<Loop, number>>;
  /** CONVOY_LOG_LEVEL of the functions and the relay; default info. */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /**
   * The relay's container image: a URI (or `RelayImage.fromUri`) you publish — `npm run image`
   * builds it without Docker — or `RelayImage.fromDockerfile()`, a DockerImageAsset CDK builds from
   * image/Dockerfile at deploy time (needs Docker there). Default DEFAULT_RELAY_IMAGE.
   */
  readonly relayImage?: string | RelayImage;
  /**
   * The EKS management cluster. The relay manifests (CRDs, RBAC, Deployment…) are installed on it
   * (`cluster.addManifest`, so an imported cluster needs its kubectl role and layer), and the
   * relay's Pod Identity association is created. Replaces managementClusterName.
   */
  readonly cluster?: eks.ICluster;
  /** Run the functions in this VPC (e.g. to reach a private EKS endpoint); they need a route to SQS, S3 and STS. */
  readonly vpc?: ec2.IVpc;
  /** Subnets of the functions in `vpc`; default the VPC's private subnets. */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** Security groups of the functions in `vpc`; default one that allows all outbound traffic. */
  readonly securityGroups?: ec2.ISecurityGroup[];
  /**
   * Server access logs of the render store go to this bucket (prefix `convoy-render-store/`).
   * Default none: the functions and the relay are the only writers and readers, and CloudTrail
   * data events are the audit trail to turn on if you need one (the choice is acknowledged to cdk-nag).
   */
  readonly serverAccessLogsBucket?: s3.IBucket;
  /** Bucket and KMS key removal policy; default RETAIN (renders are state). */
  readonly removalPolicy?: RemovalPolicy;
  /** CloudFormation outputs (queue URLs, bucket, relay role, relay manifests); default true. */
  readonly outputs?: boolean;
}

export { ESM_BANNER };

const DEFAULT_MEMORY: Record<Loop, number> = { reconcile: 1024, drift: 512, health: 512 };
const DEFAULT_MAX_CONCURRENCY = 10;
const SQS_MAX_VISIBILITY = Duration.hours(12);
const LAMBDA_MAX_TIMEOUT = Duration.minutes(15);

export class ConvoyConfigError extends Error {
  override name = 'ConvoyConfigError';
}

/** The queue each loop sends to besides its own (functions/runtime/notifier.ts). */
const SENDS_TO: Record<Loop, readonly Loop[]> = {
  reconcile: ['drift', 'health'],
  drift: ['reconcile'],
  health: [],
};

export class Convoy extends Construct {
  readonly queues: Readonly<Record<Loop, sqs.Queue>>;
  readonly deadLetterQueues: Readonly<Record<Loop, sqs.Queue>>;
  readonly functions: Readonly<Record<Loop, lambda.Function>>;
  readonly renderBucket: s3.Bucket;
  readonly key: kms.Key;
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
    const timeout = props.functionTimeout ?? LAMBDA_MAX_TIMEOUT;
    if (timeout.toSeconds() > LAMBDA_MAX_TIMEOUT.toSeconds()) {
      throw new ConvoyConfigError(
        `Convoy ${id}: functionTimeout ${timeout.toHumanString()} exceeds Lambda's 15 minutes; lower it`,
      );
    }
    const visibility = timeout.plus(TIMEOUT_MARGIN);
    if (visibility.toSeconds() > SQS_MAX_VISIBILITY.toSeconds()) {
      throw new ConvoyConfigError(
        `Convoy ${id}: functionTimeout + margin exceeds SQS's 12 h visibility limit; lower functionTimeout`,
      );
    }
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    if (props.kubeconfigSecret !== undefined && props.kubeconfigPath !== undefined) {
      throw new ConvoyConfigError(`Convoy ${id}: give kubeconfigSecret or kubeconfigPath, not both`);
    }
    conflictingProps(id, props);
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
    const maxReceiveCount = props.maxReceiveCount ?? DEFAULT_MAX_RECEIVE_COUNT;
    const queues = {} as Record<Loop, sqs.Queue>;
    const dlqs = {} as Record<Loop, sqs.Queue>;
    for (const loop of LOOPS) {
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
    const lifecycleRules: s3.LifecycleRule[] = [
      {
        id: 'abort-incomplete-uploads-and-noncurrent-versions',
        abortIncompleteMultipartUploadAfter: Duration.days(1),
        // Versioning is off; this only matters if someone turns it on, so old versions do not pile up.
        noncurrentVersionExpiration: Duration.days(1),
      },
    ];
    if (props.retention?.expireRendersAfter !== undefined) {
      lifecycleRules.push({
        id: 'expire-old-renders',
        prefix: 'renders/',
        expiration: props.retention.expireRendersAfter,
      });
    }
    this.renderBucket = new s3.Bucket(this, 'RenderStore', {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: this.key,
      bucketKeyEnabled: true,
      versioned: false,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules,
      removalPolicy,
      ...(props.serverAccessLogsBucket !== undefined
        ? { serverAccessLogsBucket: props.serverAccessLogsBucket, serverAccessLogsPrefix: 'convoy-render-store/' }
        : {}),
    });
    if (props.serverAccessLogsBucket === undefined) {
      acknowledge(
        this.renderBucket,
        'AwsSolutions-S1',
        "Only convoy's functions and relay read and write the render store, through IAM scoped to its renders/ prefix; pass serverAccessLogsBucket for access logs, or turn on CloudTrail data events.",
      );
    }

    // --- Functions -----------------------------------------------------------------------------
    this.kubectlLayer = new KubectlV36Layer(this, 'KubectlLayer');
    const environment: Record<string, string> = {
      CONVOY_NAMESPACE: namespace,
      CONVOY_RENDER_BUCKET: this.renderBucket.bucketName,
      CONVOY_RECONCILE_QUEUE_URL: queues.reconcile.queueUrl,
      CONVOY_DRIFT_QUEUE_URL: queues.drift.queueUrl,
      CONVOY_HEALTH_QUEUE_URL: queues.health.queueUrl,
      CONVOY_CACHE_DIR: '/tmp/convoy',
      // The Lease does not cover the whole invocation: a heartbeat renews it (domain/runtime/lease.ts).
      CONVOY_LEASE_SECONDS: String(MAX_LEASE_SECONDS),
      CONVOY_LOG_LEVEL: props.logLevel ?? 'info',
      NODE_OPTIONS: '--enable-source-maps',
      // Names, public endpoints and tenancy settings only: no kubeconfig or token (function-access.ts).
      ...functionAccessEnvironment(props, namespace),
      ...(props.kubeconfigPath !== undefined ? { CONVOY_KUBECONFIG_PATH: props.kubeconfigPath } : {}),
      // AWS_REGION is set by Lambda itself (and reserved: it may not be set here).
    };

    const functions = {} as Record<Loop, lambda.Function>;
    for (const loop of LOOPS) {
      const name = capitalize(loop);
      const logGroup = new logs.LogGroup(this, `${name}Logs`, {
        retention: logs.RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const role = functionRole(this, `${name}Role`, { logGroup, vpc: props.vpc !== undefined, description: `convoy ${loop} function` });
      functions[loop] = loopFunction(this, `${name}Function`, loop, props.entries?.[loop], {
        description: `convoy ${loop} loop`,
        role,
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
        memorySize: props.memorySize?.[loop] ?? DEFAULT_MEMORY[loop],
        ephemeralStorageSize: loop === 'reconcile' ? Size.mebibytes(2048) : undefined,
        timeout,
        environment,
        environmentEncryption: this.key,
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
    this.functions = functions;

    // --- IAM: functions ------------------------------------------------------------------------
    // Consuming (the event source) already grants receive/delete/ChangeMessageVisibility on its own queue.
    for (const loop of LOOPS) {
      for (const target of SENDS_TO[loop]) queues[target].grantSendMessages(functions[loop]);
    }
    const store = { bucket: this.renderBucket, key: this.key };
    grantRenderStore(functions.reconcile, store, 'readwrite');
    grantRenderStore(functions.drift, store, 'read');
    grantRenderStore(functions.health, store, 'read');
    grantFunctionAccess(this, functions, props);

    // --- IAM: relay (EKS Pod Identity) ---------------------------------------------------------
    this.relayRole = relayRole(this, {
      namespace,
      serviceAccount: RELAY_SERVICE_ACCOUNT,
      ...(props.managementClusterName !== undefined ? { clusterName: props.managementClusterName } : {}),
      ...(props.cluster !== undefined ? { clusterName: props.cluster.clusterName } : {}),
    });
    for (const loop of LOOPS) queues[loop].grantSendMessages(this.relayRole);
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
      for (const loop of LOOPS) {
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

/** Props that cannot go together fail synth, naming both. */
function conflictingProps(id: string, props: ConvoyProps): void {
  const pairs: [keyof ConvoyProps, keyof ConvoyProps, string][] = [
    ['cluster', 'managementClusterName', 'cluster names the management cluster already'],
    ['cluster', 'kubeconfigSecret', 'with cluster, the functions reach the management cluster through EKS access, not a kubeconfig'],
    ['cluster', 'kubeconfigPath', 'with cluster, the functions reach the management cluster through EKS access, not a kubeconfig'],
  ];
  for (const [a, b, why] of pairs) {
    if (props[a] !== undefined && props[b] !== undefined) {
      throw new ConvoyConfigError(`Convoy ${id}: give ${a} or ${b}, not both (${why})`);
    }
  }
  for (const needsVpc of ['vpcSubnets', 'securityGroups'] as const) {
    if (props[needsVpc] !== undefined && props.vpc === undefined) {
      throw new ConvoyConfigError(`Convoy ${id}: ${needsVpc} is given without vpc; pass vpc too (the functions run outside any VPC otherwise)`);
    }
  }
}

function capitalize(loop: Loop): string {
  return loop.charAt(0).toUpperCase() + loop.slice(1);
}

function maxConcurrencyOf(setting: ConvoyProps['maxConcurrency'], loop: Loop): number {
  const value = typeof setting === 'number' ? setting : (setting?.[loop] ?? DEFAULT_MAX_CONCURRENCY);
  if (!Number.isInteger(value) || value < 2 || value > 1000) {
    throw new ConvoyConfigError(
      `Convoy: maxConcurrency for ${loop} is ${value}; SQS event source mappings accept an integer from 2 to 1000`,
    );
  }
  return value;
}
