// The Convoy construct under cdk-nag v3's AwsSolutionsChecks (what a user's CDK app applies), and
// the properties of the synthesized template the package test checks again from the installed tarball.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubectlV36Layer } from '@aws-cdk/lambda-layer-kubectl-v36';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { Convoy, ConvoyConfigError, RelayImage, type ConvoyProps } from '../../../infra/convoy-construct.ts';
import { checkTemplate, type CfnTemplate } from '../../package/template-checks.ts';

const outdir = mkdtempSync(join(tmpdir(), 'convoy-nag-'));
// A package root for the DockerImageAsset: the real Dockerfile and a stand-in for the compiled relay,
// so the test does not depend on `npm run build` having run in this checkout.
const imageRoot = mkdtempSync(join(tmpdir(), 'convoy-nag-image-'));
mkdirSync(join(imageRoot, 'image'));
mkdirSync(join(imageRoot, 'dist', 'relay'), { recursive: true });
copyFileSync(
  join(import.meta.dirname, '..', '..', '..', 'image', 'Dockerfile'),
  join(imageRoot, 'image', 'Dockerfile'),
);
writeFileSync(join(imageRoot, 'dist', 'relay', 'main.js'), '// stand-in\n');
afterAll(() => {
  rmSync(outdir, { recursive: true, force: true });
  rmSync(imageRoot, { recursive: true, force: true });
});

type Extra = (stack: Stack) => Partial<ConvoyProps>;
type Resources = Record<string, { Properties: Record<string, unknown> }>;
const resources = (template: Template, type: string) =>
  Object.values(template.findResources(type) as Resources).map((r) => r.Properties);

function synth(extra: Extra = () => ({ kubeconfigPath: '/opt/kubeconfig' })) {
  const app = new App({
    outdir,
    context: { 'aws:cdk:disable-asset-staging': true, 'aws:cdk:bundling-stacks': [] },
  });
  const stack = new Stack(app, 'User', { env: { account: '111111111111', region: 'eu-west-1' } });
  const convoy = new Convoy(stack, 'Convoy', {
    alarmsTopic: new sns.Topic(stack, 'Alarms', { enforceSSL: true }),
    ...extra(stack),
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
  app.synth();
  return { stack, convoy, template: Template.fromStack(stack) };
}

const privateNetwork: Extra = (stack) => ({
  cluster: eks.Cluster.fromClusterAttributes(stack, 'Mgmt', {
    clusterName: 'mgmt',
    kubectlRoleArn: 'arn:aws:iam::111111111111:role/kubectl',
    clusterEndpoint: 'https://0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com',
    clusterCertificateAuthorityData: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==',
    kubectlLayer: new KubectlV36Layer(stack, 'KubectlLayer'),
  }),
  vpc: ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
    vpcId: 'vpc-0123456789abcdef0',
    availabilityZones: ['eu-west-1a', 'eu-west-1b'],
    privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
  }),
  relayImage: RelayImage.fromDockerfile({ directory: imageRoot }),
});

describe('Convoy under cdk-nag AwsSolutionsChecks', { timeout: 120_000 }, () => {
  it('synthesizes with no finding; every function Node.js 24, ReportBatchItemFailures, a DLQ, error and throttle alarms; each wildcard acknowledged with a reason', () => {
    const { template } = synth();
    expect(checkTemplate(template.toJSON() as CfnTemplate)).toEqual([]);
    // No AWS managed policy on convoy's roles: a customer-managed execution policy instead.
    for (const role of resources(template, 'AWS::IAM::Role')) {
      expect(JSON.stringify(role['ManagedPolicyArns'] ?? [])).not.toContain(':iam::aws:policy/');
    }
  });

  it('with an EKS cluster, a VPC and a DockerImageAsset: still no finding; manifests installed, Pod Identity wired, functions in the VPC', () => {
    const { template } = synth(privateNetwork);
    expect(checkTemplate(template.toJSON() as CfnTemplate)).toEqual([]);
    const installs = resources(template, 'Custom::AWSCDK-EKS-KubernetesResource');
    expect(installs).toHaveLength(1);
    const manifest = JSON.stringify(installs[0]?.['Manifest']);
    for (const kind of [
      'CustomResourceDefinition',
      'ServiceAccount',
      'ClusterRole',
      'Deployment',
      'PodDisruptionBudget',
      'NetworkPolicy',
    ])
      expect(manifest).toContain(kind);
    expect(manifest).toContain('dkr.ecr');
    template.hasResourceProperties('AWS::EKS::PodIdentityAssociation', {
      ClusterName: 'mgmt',
      Namespace: 'convoy-system',
      ServiceAccount: 'convoy-relay',
    });
    for (const fn of resources(template, 'AWS::Lambda::Function').filter((f) =>
      String(f['Description']).startsWith('convoy '),
    )) {
      expect((fn['VpcConfig'] as { SubnetIds: unknown }).SubnetIds).toEqual([
        'subnet-0123456789abcdef0',
        'subnet-0123456789abcdef1',
      ]);
    }
  });
});

describe('conflicting props fail synth naming both', () => {
  const secret = (stack: Stack) => secretsmanager.Secret.fromSecretNameV2(stack, 'K', 'kubeconfig');
  it.each([
    [
      'cluster and kubeconfigSecret',
      (stack: Stack) => ({ ...privateNetwork(stack), kubeconfigSecret: secret(stack) }),
      /give cluster or kubeconfigSecret, not both/,
    ],
    [
      'cluster and managementClusterName',
      (stack: Stack) => ({ ...privateNetwork(stack), managementClusterName: 'other' }),
      /give cluster or managementClusterName, not both/,
    ],
    [
      'kubeconfigSecret and kubeconfigPath',
      (stack: Stack) => ({ kubeconfigSecret: secret(stack), kubeconfigPath: '/k' }),
      /kubeconfigSecret or kubeconfigPath, not both/,
    ],
    [
      'securityGroups without vpc',
      (stack: Stack) => ({
        securityGroups: [ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123456789abcdef0')],
      }),
      /securityGroups is given without vpc/,
    ],
  ] as const)('%s', (_name, extra, message) => {
    expect(() => synth(extra)).toThrow(ConvoyConfigError);
    expect(() => synth(extra)).toThrow(message);
  });

  it('an empty image URI is refused', () => {
    expect(() => RelayImage.fromUri(' ')).toThrow(/image URI is empty/);
  });
});

describe('checkTemplate (the template checks the package test repeats)', () => {
  it('reports a wildcard resource without a written IAM5 reason, a wrong runtime and a missing DLQ', () => {
    const template: CfnTemplate = {
      Resources: {
        Fn: {
          Type: 'AWS::Lambda::Function',
          Properties: { Description: 'convoy reconcile loop', Runtime: 'nodejs20.x' },
        },
        Map: {
          Type: 'AWS::Lambda::EventSourceMapping',
          Properties: { FunctionName: { Ref: 'Fn' }, EventSourceArn: { 'Fn::GetAtt': ['Q', 'Arn'] } },
        },
        Q: { Type: 'AWS::SQS::Queue', Properties: {} },
        P: {
          Type: 'AWS::IAM::Policy',
          Properties: {
            PolicyDocument: { Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: '*' }] },
          },
        },
      },
    };
    const problems = checkTemplate(template);
    expect(problems).toEqual(
      expect.arrayContaining([
        'expected 4 convoy functions, found 1',
        'Fn: runtime nodejs20.x, not nodejs24.x',
        'Map: no ReportBatchItemFailures',
        'Fn: its queue has no dead-letter queue',
        'Fn: no age alarm on its queue Q',
        'Fn: no Errors alarm',
        'P: wildcard resource (["s3:GetObject"]) without a written AwsSolutions-IAM5 suppression reason',
      ]),
    );
  });
});
