// Installs the relay manifests on an EKS cluster (aws-eks KubernetesManifest, applied by its kubectl
// provider) and acknowledges, with reasons, the cdk-nag findings of that provider: it is aws-eks's
// own CDK-managed handler, whose runtime and policies convoy does not choose.
import { Stack, type CfnResource } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks';
import { Construct, type IConstruct } from 'constructs';
import { acknowledge } from './function-iam.ts';
import type { KubeManifest } from './kube-manifest.ts';

const PROVIDER_REASON =
  "aws-eks's kubectl provider (the CDK-managed Lambda that runs kubectl apply for KubernetesManifest) sets its own runtime and AWS managed policies; convoy's functions and relay do not use it";

function logicalId(construct: IConstruct | undefined): string | undefined {
  const cfn = construct?.node.defaultChild ?? construct;
  return cfn === undefined ? undefined : Stack.of(cfn).getLogicalId(cfn as CfnResource);
}

function acknowledgeKubectlProvider(provider: IConstruct): void {
  const handler = provider.node.tryFindChild('Handler');
  const handlerId = logicalId(handler);
  const ecrPublic = logicalId(handler?.node.tryFindChild('HasEcrPublic'));
  const findings = [
    'AwsSolutions-L1',
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly]',
    ...(ecrPublic !== undefined
      ? [
          `AwsSolutions-IAM4[Policy::{"Fn::If":["${ecrPublic}",{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":iam::aws:policy/AmazonElasticContainerRegistryPublicReadOnly"]]},{"Ref":"AWS::NoValue"}]}]`,
        ]
      : []),
    ...(handlerId !== undefined ? [`AwsSolutions-IAM5[Resource::<${handlerId}.Arn>:*]`] : []),
  ];
  for (const finding of findings) acknowledge(provider, finding, PROVIDER_REASON);
}

export function installRelayManifests(
  scope: Construct,
  cluster: eks.ICluster,
  manifests: readonly KubeManifest[],
): eks.KubernetesManifest {
  // CRDs first in the list: one `kubectl apply` creates them before the objects that follow.
  const installed = new eks.KubernetesManifest(scope, 'RelayInstall', {
    cluster,
    manifest: [...manifests],
    overwrite: true,
  });
  const provider = eks.KubectlProvider.getOrCreate(scope, cluster);
  if (provider instanceof Construct) acknowledgeKubectlProvider(provider);
  return installed;
}
