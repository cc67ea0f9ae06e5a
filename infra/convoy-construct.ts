/**
 * `new Convoy(scope, id, props)`: convoy on AWS (ARCHITECTURE.md, "Many machines: AWS").
 *
 * - four standard SQS queues (reconcile, drift, health, fleet), each with a dead-letter queue;
 * - four Node.js 24 Lambda functions bundled with esbuild from functions/<loop>/handler.ts,
 *   fed by event source mappings with ReportBatchItemFailures and maximum concurrency (the
 *   fleet function, the ReleaseSet loop: infra/fleet-function.ts);
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
 *
 * The queues, functions and their IAM are made in loop-functions.ts, the relay's role, manifests
 * and the outputs in convoy-relay.ts; the constructor reads as the list of steps.
 */
import { ESM_BANNER } from './esm-banner.ts';
import { functionAlarms } from './function-alarms.ts';
import { defaultEntry, PACKAGE_ROOT } from './function-code.ts';
import { queueAlarms } from './queue-alarms.ts';
import { RelayImage } from './relay-image.ts';
import { installRelayManifests } from './relay-install.ts';
import { hintKeySecret } from './function-hint-key.ts';
import {
  DEFAULT_FLEET_BATCH_SIZE,
  DEFAULT_MEMORY_MB,
  type ConvoyProps,
  withEgressAllow,
} from './convoy-props.ts';
import { FLEET_QUEUE_URL_VARIABLE } from './fleet-function.ts';
import { renderLimitProblem } from './render-limits.ts';
import { renderStoreBucket } from './render-store-bucket.ts';
import { conflictingProps, ConvoyConfigError, timingsOf } from './convoy-config-checks.ts';
import { grantLoopAccess, loopFunctions, loopQueues } from './loop-functions.ts';
import { notificationBus } from './notifications.ts';
import { constructRelayManifests, convoyOutputs, relayAccess } from './convoy-relay.ts';

export type { ConvoyProps, ConvoyRetentionProps } from './convoy-props.ts';
export { ConvoyConfigError, DEFAULT_FLEET_BATCH_SIZE, DEFAULT_MEMORY_MB, FLEET_QUEUE_URL_VARIABLE };
import { KubectlV36Layer } from '@aws-cdk/lambda-layer-kubectl-v36';
import { Annotations, Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as events from 'aws-cdk-lib/aws-events';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { deriveTimings } from '../domain/runtime/timings.ts';
import {
  FLEET_LOOP,
  LOOPS,
  QUEUE_LOOPS,
  type Loop,
  type QueueLoop,
} from '../domain/runtime/queue-message.ts';
import { DEFAULT_INSTALLATION_NAMESPACE, type KubeManifest } from './relay-manifests.ts';

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
  /** The EventBridge bus of notifications, when `notifications` is set (infra/notifications.ts). */
  readonly notificationBus: events.IEventBus | undefined;

  constructor(scope: Construct, id: string, given: ConvoyProps = {}) {
    super(scope, id);
    const props = withEgressAllow(given);
    const namespace = props.installationNamespace ?? DEFAULT_INSTALLATION_NAMESPACE;
    this.installationNamespace = namespace;
    const timings = timingsOf(id, props);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    checkProps(this, id, props);

    this.key = new kms.Key(this, 'Key', {
      description: 'convoy: render store (renders hold Secret objects) and function environment',
      enableKeyRotation: true,
      removalPolicy,
    });
    const { queues, dlqs } = loopQueues(this, {
      visibilityTimeout: Duration.seconds(timings.visibilityTimeoutSeconds),
      maxReceiveCount: timings.maxReceiveCount,
    });
    this.queues = queues;
    this.deadLetterQueues = dlqs;
    this.renderBucket = renderStoreBucket(this, {
      key: this.key,
      removalPolicy,
      retention: props.retention,
      serverAccessLogsBucket: props.serverAccessLogsBucket,
    });
    // The functions' hint key, read by each container at init (function-hint-key.ts).
    this.hintKeySecret = hintKeySecret(this, { key: this.key, removalPolicy });
    const store = { bucket: this.renderBucket, key: this.key };

    this.kubectlLayer = new KubectlV36Layer(this, 'KubectlLayer');
    this.functions = loopFunctions(this, props, {
      id,
      namespace,
      queues,
      store,
      hintKeySecret: this.hintKeySecret,
      kubectlLayer: this.kubectlLayer,
      timeout: Duration.seconds(timings.functionTimeoutSeconds),
    });
    grantLoopAccess(this, this.functions, { queues, dlqs, store, hintKeySecret: this.hintKeySecret, props });
    if (props.notifications !== undefined) {
      this.notificationBus = notificationBus(this, props.notifications, Object.values(this.functions));
    }
    this.relayRole = relayAccess(this, props, { namespace, queues, store });
    this.alarms = [
      ...functionAlarms(this, {
        functions: this.functions,
        ...(props.alarmsTopic ? { topic: props.alarmsTopic } : {}),
      }),
      ...queueAlarms(this, {
        queues,
        dlqs,
        maxReceiveCount: timings.maxReceiveCount,
        ageThreshold: props.queueAgeAlarmThreshold ?? Duration.minutes(15),
        ...(props.alarmsTopic ? { topic: props.alarmsTopic } : {}),
      }),
    ];

    this.relayManifests = constructRelayManifests(this, props, {
      namespace,
      queues,
      renderBucket: this.renderBucket.bucketName,
    });
    if (props.cluster !== undefined) installRelayManifests(this, props.cluster, this.relayManifests);
    if (props.outputs ?? true) {
      convoyOutputs(this, {
        queues,
        renderBucket: this.renderBucket.bucketName,
        relayRole: this.relayRole,
        relayManifests: this.relayManifests,
      });
    }
  }
}

/** Props that cannot be synthesized fail here, naming them; a construct that cannot reach its cluster warns. */
function checkProps(scope: Construct, id: string, props: ConvoyProps): void {
  if (props.kubeconfigSecret !== undefined && props.kubeconfigPath !== undefined) {
    throw new ConvoyConfigError(`Convoy ${id}: give kubeconfigSecret or kubeconfigPath, not both`);
  }
  conflictingProps(id, props);
  const limitProblem = renderLimitProblem(props);
  if (limitProblem !== undefined) throw new ConvoyConfigError(`Convoy ${id}: ${limitProblem}`);
  if (
    props.kubeconfigSecret === undefined &&
    props.kubeconfigPath === undefined &&
    props.cluster === undefined
  ) {
    Annotations.of(scope).addWarningV2(
      'convoy:noKubeconfig',
      'Convoy: neither kubeconfigSecret nor kubeconfigPath is set, so the functions cannot reach the management cluster',
    );
  }
}
