// IAM for convoy's functions and relay, scoped to what the code calls (cdk-nag AwsSolutionsChecks
// clean): a customer-managed execution policy instead of AWSLambdaBasicExecutionRole, render-store
// access limited to the store's prefix and the KMS actions S3 uses, and an acknowledgement with a
// written reason for each wildcard that remains.
import { Stack, Validations, type CfnResource } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct, IConstruct } from 'constructs';

/** The render store's key prefix (adapters/store/s3-render-store.ts). */
export const RENDER_PREFIX = 'renders/';

/** cdk-nag v3 finding ids are acknowledged as `<pack>::<rule>[<finding>]`. */
export function acknowledge(scope: IConstruct, finding: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: `AwsSolutions::${finding}`, reason });
}

/**
 * The role of one function: logs to its own log group only (customer-managed policy); with a VPC,
 * the ENI actions Lambda needs (they take no resource, so `*` with a written reason).
 */
export function functionRole(
  scope: Construct,
  id: string,
  props: { logGroup: logs.ILogGroup; vpc: boolean; description: string },
): iam.Role {
  const role = new iam.Role(scope, id, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: props.description,
  });
  const statements = [
    new iam.PolicyStatement({
      actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
      resources: [props.logGroup.logGroupArn],
    }),
  ];
  if (props.vpc) {
    statements.push(
      new iam.PolicyStatement({
        actions: [
          'ec2:CreateNetworkInterface',
          'ec2:DescribeNetworkInterfaces',
          'ec2:DescribeSubnets',
          'ec2:DeleteNetworkInterface',
          'ec2:AssignPrivateIpAddresses',
          'ec2:UnassignPrivateIpAddresses',
        ],
        resources: ['*'],
      }),
    );
  }
  const policy = new iam.ManagedPolicy(scope, `${id}ExecutionPolicy`, {
    description: `${props.description}: logs${props.vpc ? ' and VPC network interfaces' : ''}`,
    statements,
  });
  role.addManagedPolicy(policy);
  if (props.vpc) {
    acknowledge(
      policy,
      'AwsSolutions-IAM5[Resource::*]',
      'Lambda creates and deletes the network interfaces of a function in a VPC itself; the EC2 network-interface actions support no resource-level scoping (what AWSLambdaVPCAccessExecutionRole grants, as a customer-managed policy).',
    );
  }
  return role;
}

/**
 * Read (GetObject, ListBucket under the prefix, kms:Decrypt) or read-write (plus PutObject,
 * DeleteObject, kms:GenerateDataKey) on the render store; nothing outside `renders/`.
 */
export function grantRenderStore(
  grantee: iam.IGrantable & IConstruct,
  store: { bucket: s3.IBucket; key: kms.IKey },
  mode: 'read' | 'readwrite',
): void {
  const objects = store.bucket.arnForObjects(`${RENDER_PREFIX}*`);
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: mode === 'read' ? ['s3:GetObject'] : ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
      resources: [objects],
    }),
  );
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: [store.bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${RENDER_PREFIX}*`] } },
    }),
  );
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: mode === 'read' ? ['kms:Decrypt'] : ['kms:Decrypt', 'kms:GenerateDataKey'],
      resources: [store.key.keyArn],
    }),
  );
  const bucketId = Stack.of(store.bucket).getLogicalId(store.bucket.node.defaultChild as CfnResource);
  // The statements land in the principal's policy (a function's role), so the acknowledgement goes there.
  const principal = grantee.grantPrincipal as Partial<IConstruct>;
  acknowledge(
    principal.node !== undefined ? (principal as IConstruct) : grantee,
    `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${RENDER_PREFIX}*]`,
    `Render objects are content-addressed (${RENDER_PREFIX}<namespace>/<release>/<sha256>.json.gz), so their keys are known only at run time; access is limited to the ${RENDER_PREFIX} prefix of convoy's own bucket.`,
  );
}
