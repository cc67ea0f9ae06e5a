// The relay's IAM role, assumed through EKS Pod Identity.
import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

export interface RelayRoleProps {
  namespace: string;
  serviceAccount: string;
  /** The management cluster; when known, the role is pinned to it and the association is created. */
  clusterName?: string;
}

/**
 * The session tags EKS Pod Identity sets (on by default) pin the role to the
 * relay ServiceAccount and, when known, to the management cluster: no other
 * association in the account can use it.
 */
export function relayRole(scope: Construct, props: RelayRoleProps): iam.Role {
  const conditions: Record<string, string> = {
    'aws:RequestTag/kubernetes-namespace': props.namespace,
    'aws:RequestTag/kubernetes-service-account': props.serviceAccount,
    ...(props.clusterName !== undefined ? { 'aws:RequestTag/eks-cluster-name': props.clusterName } : {}),
  };
  const role = new iam.Role(scope, 'RelayRole', {
    description: `convoy relay (${props.namespace}/${props.serviceAccount}) via EKS Pod Identity`,
    assumedBy: new iam.SessionTagsPrincipal(
      new iam.ServicePrincipal('pods.eks.amazonaws.com'),
    ).withConditions({
      StringEquals: conditions,
    }),
  });
  if (props.clusterName !== undefined) {
    new eks.CfnPodIdentityAssociation(scope, 'RelayPodIdentity', {
      clusterName: props.clusterName,
      namespace: props.namespace,
      serviceAccount: props.serviceAccount,
      roleArn: role.roleArn,
    });
  }
  return role;
}
