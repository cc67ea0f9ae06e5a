/**
 * The fleet function: the ReleaseSet loop, a fourth function fed by its own queue, so a
 * set's message never waits behind thousands of Release reconciles (docs/fleet.md, "On AWS").
 *
 * What it gets, and only that:
 * - its own log group and role (functionRole: logs to that group; ENI actions in a VPC);
 * - the event source mapping on the fleet queue (ReportBatchItemFailures, maximum concurrency,
 *   DEFAULT_FLEET_BATCH_SIZE records): receive, delete, ChangeMessageVisibility on that queue;
 * - SendMessage to its own queue only: a set's next run (a busy Lease per set, a requeue) is a new
 *   message there (functions/runtime/sqs-batch-handler.ts `resend`);
 * - read of the render store (renders/ prefix, kms:Decrypt): a rollback looks up a child's render
 *   of the revision it goes back to;
 * - ECR pull on `ecrRepositories`, as the reconcile: the set's template source is resolved with
 *   the reconcile's source port (adapters/source/template-source.ts), so a Helm chart in ECR
 *   (`oci://…`, `provider: aws`) resolves for the set exactly as for its children;
 * - 2 GiB of /tmp like the reconcile: that source port keeps the same Git and chart caches there;
 * - the environment of the other functions (functions/runtime/config.ts needs the three Release
 *   queue URLs; they are names, no grant comes with them) plus CONVOY_FLEET_QUEUE_URL, without the
 *   hint key (it seals the reconcile's hints to the observers; the fleet function neither sends
 *   nor reads one, so it is neither in its environment nor readable by its role).
 * The management-cluster access (EKS access entry, kubeconfig secret) is the other functions'
 * (function-access.ts); no EKS target grants: it never acts on a target cluster.
 */
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Size } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import { RemovalPolicy } from 'aws-cdk-lib';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { FLEET_LOOP } from '../domain/runtime/queue-message.ts';
import { DEFAULT_FLEET_BATCH_SIZE } from './convoy-props.ts';
import { grantEcrPull } from './ecr-access.ts';
import { loopFunction, type LoopFunctionProps } from './function-code.ts';
import { functionRole, grantRenderStore } from './function-iam.ts';

/** The variable holding the fleet queue's URL (the fleet function's and the relay's). */
export const FLEET_QUEUE_URL_VARIABLE = 'CONVOY_FLEET_QUEUE_URL';

export interface FleetFunctionProps {
  readonly queue: sqs.IQueue;
  /** The environment every function gets (without the hint key's ARN). */
  readonly environment: Readonly<Record<string, string>>;
  readonly store: { readonly bucket: s3.IBucket; readonly key: kms.IKey };
  /** Settings shared with the other functions: runtime, architecture, timeout, VPC, environment encryption. */
  readonly common: Omit<
    LoopFunctionProps,
    'role' | 'logGroup' | 'description' | 'memorySize' | 'environment' | 'layers' | 'ephemeralStorageSize'
  >;
  readonly vpc: boolean;
  readonly memorySize: number;
  readonly entry?: string | undefined;
  readonly batchSize?: number | undefined;
  readonly maxConcurrency: number;
  /** ECR repositories Releases (and so ReleaseSet templates) may pull from (ConvoyProps.ecrRepositories). */
  readonly ecrRepositories?: readonly string[] | undefined;
}

export class FleetFunctionError extends Error {
  override name = 'FleetFunctionError';
}

export function fleetFunction(scope: Construct, props: FleetFunctionProps): lambda.Function {
  const batchSize = props.batchSize ?? DEFAULT_FLEET_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10) {
    // Above 10 an SQS mapping needs a batching window, which would delay every set's run.
    throw new FleetFunctionError(`fleetBatchSize is ${batchSize}; give a whole number from 1 to 10`);
  }
  const logGroup = new logs.LogGroup(scope, 'FleetLogs', {
    retention: logs.RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = functionRole(scope, 'FleetRole', {
    logGroup,
    vpc: props.vpc,
    description: `convoy ${FLEET_LOOP} function`,
  });
  const fn = loopFunction(scope, 'FleetFunction', FLEET_LOOP, props.entry, {
    ...props.common,
    description: 'convoy fleet loop (ReleaseSets)',
    role,
    logGroup,
    memorySize: props.memorySize,
    ephemeralStorageSize: Size.mebibytes(2048),
    environment: { ...props.environment, [FLEET_QUEUE_URL_VARIABLE]: props.queue.queueUrl },
  });
  fn.addEventSource(
    new SqsEventSource(props.queue, {
      batchSize,
      reportBatchItemFailures: true,
      maxConcurrency: props.maxConcurrency,
    }),
  );
  props.queue.grantSendMessages(fn);
  grantRenderStore(fn, props.store, 'read');
  grantEcrPull(role, props.ecrRepositories);
  return fn;
}
