/**
 * The Convoy construct's side of the relay: its IAM role (EKS Pod Identity) with what it may do on
 * AWS, its manifests with the construct's queue URLs and bucket name as tokens, and the stack
 * outputs a relay installed by hand is configured from.
 */
import { CfnOutput, Stack } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { QUEUE_LOOPS } from '../domain/runtime/queue-message.ts';
import type { ConvoyProps } from './convoy-props.ts';
import { grantRenderStore } from './function-iam.ts';
import { capitalize, type LoopQueues, type RenderStore } from './loop-functions.ts';
import { RELAY_SERVICE_ACCOUNT, relayManifests, type KubeManifest } from './relay-manifests.ts';
import { relayRole } from './relay-role.ts';

/** The relay's role, pinned to its ServiceAccount (and cluster when known): it sends to every queue and reads renders. */
export function relayAccess(
  scope: Construct,
  props: ConvoyProps,
  access: { namespace: string; queues: LoopQueues['queues']; store: RenderStore },
): iam.Role {
  const role = relayRole(scope, {
    namespace: access.namespace,
    serviceAccount: RELAY_SERVICE_ACCOUNT,
    ...(props.managementClusterName !== undefined ? { clusterName: props.managementClusterName } : {}),
    ...(props.cluster !== undefined ? { clusterName: props.cluster.clusterName } : {}),
  });
  for (const loop of QUEUE_LOOPS) access.queues[loop].grantSendMessages(role);
  grantRenderStore(role, access.store, 'read');
  return role;
}

/** relayManifests() for this construct: its namespace, queues, region, bucket and the props' image, log level and tenancy. */
export function constructRelayManifests(
  scope: Construct,
  props: ConvoyProps,
  relay: { namespace: string; queues: LoopQueues['queues']; renderBucket: string },
): KubeManifest[] {
  const { queues } = relay;
  return relayManifests({
    namespace: relay.namespace,
    queueUrls: {
      reconcile: queues.reconcile.queueUrl,
      drift: queues.drift.queueUrl,
      health: queues.health.queueUrl,
      fleet: queues.fleet.queueUrl,
    },
    region: Stack.of(scope).region,
    renderBucket: relay.renderBucket,
    ...(props.relayImage !== undefined
      ? { image: typeof props.relayImage === 'string' ? props.relayImage : props.relayImage.bind(scope) }
      : {}),
    ...(props.logLevel !== undefined ? { logLevel: props.logLevel } : {}),
    ...(props.tenancy !== undefined ? { tenancy: props.tenancy } : {}),
  });
}

/** The outputs: queue URLs, bucket name, relay role ARN and the relay manifests without the CRDs. */
export function convoyOutputs(
  scope: Construct,
  outputs: {
    queues: LoopQueues['queues'];
    renderBucket: string;
    relayRole: iam.Role;
    relayManifests: readonly KubeManifest[];
  },
): void {
  for (const loop of QUEUE_LOOPS) {
    new CfnOutput(scope, `${capitalize(loop)}QueueUrl`, {
      value: outputs.queues[loop].queueUrl,
      description: `CONVOY_${loop.toUpperCase()}_QUEUE_URL`,
    });
  }
  new CfnOutput(scope, 'RenderBucketName', {
    value: outputs.renderBucket,
    description: 'CONVOY_RENDER_BUCKET',
  });
  new CfnOutput(scope, 'RelayRoleArn', {
    value: outputs.relayRole.roleArn,
    description: 'IAM role of the relay (EKS Pod Identity)',
  });
  // The CRDs (~70 KB) stay out of the template: apply config/crds/ (or relayManifests() with its default crds) first.
  const withoutCrds = outputs.relayManifests.filter((m) => m.kind !== 'CustomResourceDefinition');
  new CfnOutput(scope, 'RelayManifests', {
    value: Stack.of(scope).toJsonString({ apiVersion: 'v1', kind: 'List', items: withoutCrds }),
    description:
      'Relay Namespace, ServiceAccount, RBAC, Deployment, Service as a v1 List (kubectl apply -f); CRDs: kubectl apply -f config/crds/',
  });
}
