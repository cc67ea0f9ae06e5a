// cfn-lint (1.51.0, the CI image's; .ci/run installs it when missing) on the templates the Convoy
// construct synthesizes for the README's example app, the package test's user app and
// infra/app.ts's stack: no error, and no warning but the ones listed in docs/decisions.md
// ("cfn-lint on the synthesized template"), each with why it stays.
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubectlV36Layer } from '@aws-cdk/lambda-layer-kubectl-v36';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveTimings, timingViolations } from '../../../domain/runtime/timings.ts';
import { Convoy, RelayImage } from '../../../infra/convoy-construct.ts';
import { ConvoyStack } from '../../../infra/stack.ts';
import {
  cfnLint,
  checkCfnLintVersion,
  KNOWN_WARNINGS,
  unexpectedFindings,
  type Finding,
} from '../../package/cfn-lint.ts';

const work = mkdtempSync(join(tmpdir(), 'convoy-cfn-lint-'));
// A package root for RelayImage.fromDockerfile (the README's choice): the real Dockerfile and a stand-in relay.
const imageRoot = join(work, 'image-root');
mkdirSync(join(imageRoot, 'image'), { recursive: true });
mkdirSync(join(imageRoot, 'dist', 'relay'), { recursive: true });
copyFileSync(
  join(import.meta.dirname, '..', '..', '..', 'image', 'Dockerfile'),
  join(imageRoot, 'image', 'Dockerfile'),
);
writeFileSync(join(imageRoot, 'dist', 'relay', 'main.js'), '// stand-in\n');
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Assets recorded, not staged; esbuild skipped: the template is the same but for asset hashes. */
function appIn(name: string): App {
  return new App({
    outdir: join(work, name),
    context: { 'aws:cdk:disable-asset-staging': true, 'aws:cdk:bundling-stacks': [] },
  });
}

const managementCluster = (stack: Stack) =>
  eks.Cluster.fromClusterAttributes(stack, 'Management', {
    clusterName: 'management',
    kubectlRoleArn: 'arn:aws:iam::123456789012:role/kubectl',
    clusterEndpoint: 'https://0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com',
    clusterCertificateAuthorityData: 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==',
    kubectlLayer: new KubectlV36Layer(stack, 'Kubectl'),
  });

/** The apps whose templates are linted, each synthesized into its own folder. */
const APPS: Record<string, (app: App) => void> = {
  // README, "Install on AWS (CDK)": an environment-agnostic stack, the imported EKS cluster, the relay image built by CDK.
  readme: (app) => {
    const stack = new Stack(app, 'Convoy');
    new Convoy(stack, 'Convoy', {
      cluster: managementCluster(stack),
      relayImage: RelayImage.fromDockerfile({ directory: imageRoot }),
    });
    app.synth();
  },
  // test/package/cdk-app.ts: the user app the package test synthesizes (alarms topic, VPC, cdk-nag writing its suppressions).
  'package-app': (app) => {
    const stack = new Stack(app, 'UserStack', { env: { account: '111111111111', region: 'eu-west-1' } });
    new Convoy(stack, 'Convoy', {
      alarmsTopic: new sns.Topic(stack, 'Alarms', { enforceSSL: true }),
      cluster: managementCluster(stack),
      vpc: ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
        vpcId: 'vpc-0123456789abcdef0',
        availabilityZones: ['eu-west-1a', 'eu-west-1b'],
        privateSubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
      }),
      relayImage: RelayImage.fromUri('111111111111.dkr.ecr.eu-west-1.amazonaws.com/convoy-relay:0.1.0'),
      eksTargets: {
        clusterArns: ['arn:aws:eks:eu-west-1:111111111111:cluster/prod'],
        namespaceRoles: { team: ['arn:aws:iam::111111111111:role/deployer'] },
      },
      // With `provider: aws`, the token action on *, pulls on these repositories only.
      ecrRepositories: ['charts/podinfo', 'arn:aws:ecr:us-east-1:222222222222:repository/shared/app'],
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
    app.synth();
  },
  // infra/app.ts: ConvoyStack with a kubeconfig secret and the management cluster's name (Pod Identity association).
  'infra-app': (app) => {
    new ConvoyStack(app, 'Convoy', {
      description: 'convoy: queues, functions, render store, relay IAM and alarms',
      kubeconfigSecretName: 'convoy/kubeconfig',
      convoy: {
        managementClusterName: 'management',
        relayImage: '111111111111.dkr.ecr.eu-west-1.amazonaws.com/convoy-relay:0.1.0',
      },
    });
    app.synth();
  },
};

const templatesOf = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.template.json'))
    .map((f) => join(dir, f));

describe('the synthesized template under cfn-lint', { timeout: 300_000 }, () => {
  let findings: Finding[] = [];
  let files: string[] = [];
  beforeAll(async () => {
    await checkCfnLintVersion();
    for (const [name, build] of Object.entries(APPS)) build(appIn(name));
    files = Object.keys(APPS).flatMap((name) => templatesOf(join(work, name)));
    findings = await cfnLint(files);
  }, 300_000);

  it('lints every stack of the three apps, nested stacks included (the imported cluster brings its kubectl provider)', () => {
    // readme, package app: the stack and the KubectlProvider nested stack each; infra app: one stack.
    expect(files).toHaveLength(5);
  });

  it('no error in the README example, the package test app or infra/app.ts', () => {
    const errors = findings.filter((f) => f.Level === 'Error');
    expect(errors.map((f) => `${f.Rule.Id} ${f.Message} (${f.Filename})`)).toEqual([]);
  });

  it('every warning is a known one, listed with why in docs/decisions.md', () => {
    const unknown = unexpectedFindings(findings).filter((f) => f.Level === 'Warning');
    expect(unknown.map((f) => `${f.Rule.Id} ${f.Message} (${f.Filename})`)).toEqual([]);
    for (const known of KNOWN_WARNINGS) expect(known.why.length).toBeGreaterThan(40);
  });

  it("each app's template, read back: every convoy function's Timeout, its queue's VisibilityTimeout and maxReceiveCount keep the timing rules", () => {
    type Resource = { Type: string; Properties?: Record<string, unknown> };
    let checked = 0;
    for (const file of files.filter((f) => !f.includes('.nested.'))) {
      const resources = Object.values(
        (JSON.parse(readFileSync(file, 'utf8')) as { Resources: Record<string, Resource> }).Resources,
      );
      const timeouts = resources
        .filter(
          (r) =>
            r.Type === 'AWS::Lambda::Function' && String(r.Properties?.['Description']).startsWith('convoy '),
        )
        .map((r) => r.Properties?.['Timeout']);
      const queues = resources
        .filter((r) => r.Type === 'AWS::SQS::Queue' && r.Properties?.['RedrivePolicy'] !== undefined)
        .map((r) => r.Properties ?? {});
      // reconcile, drift, health and fleet.
      expect(timeouts, file).toHaveLength(4);
      expect(queues, file).toHaveLength(4);
      for (const timeout of timeouts) {
        for (const queue of queues) {
          const t = deriveTimings({
            functionTimeoutSeconds: timeout as number,
            visibilityTimeoutSeconds: queue['VisibilityTimeout'] as number,
            maxReceiveCount: (queue['RedrivePolicy'] as { maxReceiveCount: number }).maxReceiveCount,
          });
          expect(timingViolations(t), file).toEqual([]);
          checked += 1;
        }
      }
    }
    expect(checked).toBe(48);
  });

  it('cfn-lint reports what it finds: a template with a broken reference is an error', async () => {
    const broken = join(work, 'broken.template.json');
    writeFileSync(
      broken,
      JSON.stringify({
        Resources: {
          Queue: {
            Type: 'AWS::SQS::Queue',
            Properties: {
              VisibilityTimeout: 1800,
              RedrivePolicy: {
                deadLetterTargetArn: { 'Fn::GetAtt': ['Missing', 'Arn'] },
                maxReceiveCount: 190,
              },
            },
          },
        },
      }),
    );
    const found = await cfnLint([broken]);
    expect(found.some((f) => f.Level === 'Error')).toBe(true);
  });
});
