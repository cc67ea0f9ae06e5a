// Helpers of the package test: a user's TypeScript CDK app in a fresh folder that installs the
// packed tarball, imports the construct and applies cdk-nag's AwsSolutionsChecks.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const root = join(import.meta.dirname, '..', '..');

/** The version of a package installed in this repository (so npm finds it in its cache). */
export function repoVersion(name: string): string {
  return (
    JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
  ).version;
}

/** The user's app: `node app.ts` synthesizes and prints {errors, functions, template} as JSON. */
export const APP_TS = `import { App, Stack, Validations } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as sns from 'aws-cdk-lib/aws-sns';
import { KubectlV36Layer } from '@aws-cdk/lambda-layer-kubectl-v36';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Convoy, RelayImage, type ConvoyProps } from 'convoy/infra';

const app = new App({ outdir: process.env.CDK_OUTDIR ?? 'cdk.out' });
const stack = new Stack(app, 'UserStack', { env: { account: '111111111111', region: 'eu-west-1' } });
const props: ConvoyProps = {
  alarmsTopic: new sns.Topic(stack, 'Alarms', { enforceSSL: true }),
  cluster: eks.Cluster.fromClusterAttributes(stack, 'Management', {
    clusterName: 'management',
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
  relayImage: RelayImage.fromUri('111111111111.dkr.ecr.eu-west-1.amazonaws.com/convoy-relay:0.1.0'),
};
const convoy = new Convoy(stack, 'Convoy', props);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { writeSuppressionsToCloudFormation: true }));
let errors: string[] = [];
let template: string | undefined;
try {
  template = app.synth().getStackByName('UserStack').templateFullPath;
} catch (error) {
  errors = [error instanceof Error ? error.message : String(error)];
}
process.stdout.write(JSON.stringify({ errors, functions: Object.keys(convoy.functions).length, template }) + '\\n');
`;

export async function createCdkApp(dir: string, tarball: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'user-cdk-app', private: true, type: 'module' }, null, 2),
  );
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2024',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
      },
      include: ['app.ts'],
    }),
  );
  await writeFile(join(dir, 'app.ts'), APP_TS);
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      tarball,
      ...['aws-cdk-lib', 'constructs', 'cdk-nag', '@types/node'].map((p) => `${p}@${repoVersion(p)}`),
    ],
    { cwd: dir, maxBuffer: 16 << 20 },
  );
}
