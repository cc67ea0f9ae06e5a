/**
 * How the functions reach Kubernetes on AWS, with no credential in any environment variable:
 *
 * - with the `cluster` prop: EKS access entries for the four function roles (type STANDARD, no
 *   access policy, Kubernetes group FUNCTIONS_GROUP, whose RBAC relayManifests() installs — so
 *   they get exactly what functions/ calls and nothing broader), and the cluster's name,
 *   endpoint and CA (public) in the environment; the functions mint EKS tokens from their own
 *   role (functions/runtime/management-access.ts);
 * - with `kubeconfigSecret`: the secret's ARN in the environment and read access to it; the
 *   functions read it at run time and re-read its token every 5 minutes (no redeploy on rotation);
 * - `eksTargets`: eks:DescribeCluster on the target clusters and sts:AssumeRole on their roles,
 *   for Clusters with spec.eks — the three Release functions only: the fleet function writes
 *   Releases on the management cluster and never reaches a target; `namespaceRoles` is also the installation's `eksRoles` policy
 *   (CONVOY_EKS_ROLES), so IAM and the namespace policy name the same roles.
 *
 * Plus the installation's tenancy settings (tenancyEnvironment), the same as in the relay's ConfigMap.
 */
import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { LOOPS, QUEUE_LOOPS, type Loop, type QueueLoop } from '../domain/runtime/queue-message.ts';
import { formatEksRoles, FUNCTION_ROLE } from '../domain/tenancy/eks-roles.ts';
import { FUNCTIONS_GROUP, tenancyEnvironment, type TenancyManifestOptions } from './relay-manifests.ts';

export interface FunctionAccessProps {
  readonly cluster?: eks.ICluster;
  readonly kubeconfigSecret?: secretsmanager.ISecret;
  readonly tenancy?: TenancyManifestOptions;
  readonly eksTargets?: EksTargetsProps;
}

export interface EksTargetsProps {
  /** ARNs of the EKS clusters that Clusters with spec.eks name (eks:DescribeCluster). */
  readonly clusterArns?: readonly string[];
  /** Roles that Clusters' spec.eks.roleArn name (sts:AssumeRole). */
  readonly roleArns?: readonly string[];
  /**
   * Which roles the EKS Clusters of each namespace may use (CONVOY_EKS_ROLES): namespace (or a
   * pattern, `*` for all) → role ARNs or patterns, `self` for the functions' own role. The roles
   * are granted sts:AssumeRole too. Unset: no namespace may use any role.
   */
  readonly namespaceRoles?: Readonly<Record<string, readonly string[]>>;
}

/** The functions' environment for reaching Kubernetes: names and public endpoints only. */
export function functionAccessEnvironment(
  props: FunctionAccessProps,
  namespace: string,
): Record<string, string> {
  const env: Record<string, string> = Object.fromEntries(
    tenancyEnvironment(props.tenancy, namespace).map((e) => [e.name, e.value]),
  );
  env.CONVOY_EKS_ROLES = formatEksRoles(props.eksTargets?.namespaceRoles ?? {});
  if (props.cluster !== undefined) {
    env.CONVOY_MANAGEMENT_EKS_NAME = props.cluster.clusterName;
    env.CONVOY_MANAGEMENT_SERVER = props.cluster.clusterEndpoint;
    env.CONVOY_MANAGEMENT_CA_DATA = props.cluster.clusterCertificateAuthorityData;
  } else if (props.kubeconfigSecret !== undefined) {
    env.CONVOY_KUBECONFIG_SECRET_ARN = props.kubeconfigSecret.secretArn;
  }
  return env;
}

/** Access entries and secret read for the function roles; EKS target grants for the Release functions. */
export function grantFunctionAccess(
  scope: Construct,
  functions: Readonly<Record<QueueLoop, lambda.IFunction>>,
  props: FunctionAccessProps,
): void {
  for (const loop of QUEUE_LOOPS) {
    const fn = functions[loop];
    const role = fn.role;
    if (props.cluster !== undefined && role !== undefined) {
      new eks.CfnAccessEntry(scope, `${loop[0].toUpperCase()}${loop.slice(1)}AccessEntry`, {
        clusterName: props.cluster.clusterName,
        principalArn: role.roleArn,
        type: 'STANDARD',
        kubernetesGroups: [FUNCTIONS_GROUP],
      });
    }
    if (props.kubeconfigSecret !== undefined) props.kubeconfigSecret.grantRead(fn);
    if (!isReleaseLoop(loop)) continue;
    const clusters = props.eksTargets?.clusterArns ?? [];
    const roles = assumableRoles(props.eksTargets);
    if (clusters.length > 0)
      fn.addToRolePolicy(
        new iam.PolicyStatement({ actions: ['eks:DescribeCluster'], resources: [...clusters] }),
      );
    if (roles.length > 0)
      fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['sts:AssumeRole'], resources: [...roles] }));
  }
}

function isReleaseLoop(loop: QueueLoop): loop is Loop {
  return (LOOPS as readonly string[]).includes(loop);
}

/** roleArns and every role namespaceRoles names (not `self`: the functions' own role is not assumed). */
function assumableRoles(targets: EksTargetsProps | undefined): string[] {
  const named = Object.values(targets?.namespaceRoles ?? {})
    .flat()
    .filter((role) => role !== FUNCTION_ROLE);
  return [...new Set([...(targets?.roleArns ?? []), ...named])];
}
