// The Convoy construct's tenancy parts, from the synthesized template: no kubeconfig or token in
// any function environment, EKS access entries for the function roles mapped to the
// convoy:functions group (no access policy, nothing broader), the tenancy settings in the
// environment, and EKS target grants only for what is named.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { afterAll, describe, expect, it } from 'vitest';
import { Convoy, type ConvoyProps } from '../../../infra/convoy-construct.ts';

const outdir = mkdtempSync(join(tmpdir(), 'convoy-tenancy-infra-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

function synth(props: (stack: Stack) => ConvoyProps) {
  const app = new App({
    outdir,
    context: { 'aws:cdk:disable-asset-staging': true, 'aws:cdk:bundling-stacks': [] },
  });
  const stack = new Stack(app, 'Test', { env: { account: '111111111111', region: 'eu-west-1' } });
  new Convoy(stack, 'Convoy', props(stack));
  return Template.fromStack(stack);
}

type Resource = { Properties: Record<string, unknown> };
const functionsOf = (template: Template) =>
  Object.values(template.findResources('AWS::Lambda::Function') as Record<string, Resource>).filter((f) =>
    JSON.stringify(f.Properties['Environment'] ?? {}).includes('CONVOY_RECONCILE_QUEUE_URL'),
  );
const envOf = (fn: Resource) =>
  (fn.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;

/** Anything that looks like a kubeconfig or a credential in a function's environment. */
function assertNoCredentialInEnvironment(template: Template) {
  for (const fn of functionsOf(template)) {
    const text = JSON.stringify(envOf(fn));
    expect(text).not.toContain('{{resolve:secretsmanager');
    expect(text).not.toMatch(/token|client-key|client-certificate|apiVersion: v1|kind: Config/i);
    expect(envOf(fn)['CONVOY_KUBECONFIG']).toBeUndefined();
  }
}

describe('Convoy construct: identity and tenancy', () => {
  it(
    'with the EKS management cluster: access entries for the four function roles (reconcile, drift, health, fleet), group convoy:functions, no access policy; no kubeconfig token in any function environment',
    { timeout: 120_000 },
    () => {
      const template = synth((stack) => ({
        cluster: eks.Cluster.fromClusterAttributes(stack, 'Mgmt', {
          clusterName: 'mgmt',
          clusterEndpoint: 'https://ABC.gr7.eu-west-1.eks.amazonaws.com',
          clusterCertificateAuthorityData: 'Q0EtREFUQQ==',
          kubectlRoleArn: 'arn:aws:iam::111111111111:role/kubectl',
        }),
      }));
      const entries = Object.values(
        template.findResources('AWS::EKS::AccessEntry') as Record<string, Resource>,
      );
      expect(entries).toHaveLength(4);
      const roles = new Set<string>();
      for (const entry of entries) {
        expect(entry.Properties).toMatchObject({
          ClusterName: 'mgmt',
          Type: 'STANDARD',
          KubernetesGroups: ['convoy:functions'],
        });
        expect(entry.Properties['AccessPolicies']).toBeUndefined();
        roles.add(JSON.stringify(entry.Properties['PrincipalArn']));
      }
      const functionRoles = new Set(functionsOf(template).map((fn) => JSON.stringify(fn.Properties['Role'])));
      expect(roles).toEqual(functionRoles);
      for (const fn of functionsOf(template)) {
        expect(envOf(fn)).toMatchObject({
          CONVOY_MANAGEMENT_EKS_NAME: 'mgmt',
          CONVOY_MANAGEMENT_SERVER: 'https://ABC.gr7.eu-west-1.eks.amazonaws.com',
          CONVOY_DEFAULT_SERVICE_ACCOUNT: 'default',
          CONVOY_TENANT_NAMESPACES: '',
          CONVOY_IN_CLUSTER_NAMESPACES: '',
          CONVOY_CROSS_NAMESPACE_REFS: 'false',
        });
      }
      assertNoCredentialInEnvironment(template);
      // No grant to reach other EKS clusters unless named.
      expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).not.toMatch(
        /eks:DescribeCluster|sts:AssumeRole"/,
      );
    },
  );

  it('with a kubeconfig Secret: the ARN and a read grant, never the value; tenancy settings as given', () => {
    const template = synth((stack) => ({
      kubeconfigSecret: secretsmanager.Secret.fromSecretNameV2(stack, 'Kubeconfig', 'convoy/kubeconfig'),
      tenancy: {
        defaultServiceAccount: 'deployer',
        inClusterNamespaces: 'platform,convoy-system',
        crossNamespaceRefs: false,
      },
    }));
    assertNoCredentialInEnvironment(template);
    for (const fn of functionsOf(template)) {
      expect(JSON.stringify(envOf(fn)['CONVOY_KUBECONFIG_SECRET_ARN'])).toContain('convoy/kubeconfig');
      expect(envOf(fn)).toMatchObject({
        CONVOY_DEFAULT_SERVICE_ACCOUNT: 'deployer',
        CONVOY_IN_CLUSTER_NAMESPACES: 'platform,convoy-system',
      });
    }
    expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).toContain(
      'secretsmanager:GetSecretValue',
    );
  });

  it('eksTargets: DescribeCluster on the named clusters and AssumeRole on the named roles only', () => {
    const template = synth(() => ({
      kubeconfigPath: '/opt/kubeconfig/config',
      eksTargets: {
        clusterArns: ['arn:aws:eks:eu-west-1:222222222222:cluster/prod'],
        roleArns: ['arn:aws:iam::222222222222:role/convoy-prod'],
      },
    }));
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain(
      '"Action":"eks:DescribeCluster","Effect":"Allow","Resource":"arn:aws:eks:eu-west-1:222222222222:cluster/prod"',
    );
    expect(policies).toContain(
      '"Action":"sts:AssumeRole","Effect":"Allow","Resource":"arn:aws:iam::222222222222:role/convoy-prod"',
    );
  });

  it('eksTargets.namespaceRoles: the same roles reach IAM (AssumeRole) and the namespace policy (CONVOY_EKS_ROLES); unset, no namespace may use any role', () => {
    const teamA = 'arn:aws:iam::222222222222:role/team-a-*';
    const template = synth(() => ({
      kubeconfigPath: '/opt/kubeconfig/config',
      eksTargets: {
        clusterArns: ['arn:aws:eks:eu-west-1:222222222222:cluster/prod'],
        namespaceRoles: { 'team-a': [teamA], platform: ['self'] },
      },
    }));
    for (const fn of functionsOf(template))
      expect(envOf(fn)['CONVOY_EKS_ROLES']).toBe(`team-a=${teamA};platform=self`);
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain(`"Action":"sts:AssumeRole","Effect":"Allow","Resource":"${teamA}"`);
    expect(policies).not.toContain('"Resource":"self"');
    const unset = synth(() => ({ kubeconfigPath: '/opt/kubeconfig/config' }));
    for (const fn of functionsOf(unset)) expect(envOf(fn)['CONVOY_EKS_ROLES']).toBe('');
  });
});
