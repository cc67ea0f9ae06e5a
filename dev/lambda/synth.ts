// The CloudFormation template the emulator reads the functions' settings from: a stack with the
// Convoy construct of this package (infra/), synthesized as a user's CDK app does. The management
// cluster is reached through `kubeconfigPath` (a kubeconfig of the functions' shipped identity,
// written by the caller): the construct's other ways (EKS access, a Secrets Manager kubeconfig)
// need AWS. From the repository the construct bundles functions/<loop>/handler.ts with esbuild
// (NodejsFunction); from an installed package it ships dist/lambda/<loop> as they are. Either way
// the template's asset is the code the emulator runs.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CfnTemplate } from './template.ts';

export interface SynthOptions {
  /** CONVOY_KUBECONFIG_PATH of the functions. */
  readonly kubeconfigPath: string;
  /** Where cdk.out goes; default a new temporary folder. */
  readonly outdir?: string;
  readonly installationNamespace?: string;
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Passed to the construct as is (e.g. functionTimeout, maxConcurrency, memorySize) by tests. */
  readonly props?: Record<string, unknown>;
}

export interface Synthesized {
  readonly template: CfnTemplate;
  /** cdk.out: the assets (aws:asset:path) are relative to it. */
  readonly outdir: string;
}

export class SynthError extends Error {
  override name = 'SynthError';
}

export async function synthEmulatorStack(options: SynthOptions): Promise<Synthesized> {
  let cdk: typeof import('aws-cdk-lib');
  try {
    cdk = await import('aws-cdk-lib');
  } catch {
    throw new SynthError(
      "the Lambda runtime reads the functions' settings from the Convoy construct's template, which needs aws-cdk-lib and constructs beside convoy: npm install aws-cdk-lib constructs",
    );
  }
  const { Convoy } = await import('../../infra/convoy-construct.ts');
  const outdir = options.outdir ?? (await mkdtemp(join(tmpdir(), 'convoy-lambda-cdk-')));
  const app = new cdk.App({ outdir, context: { 'aws:cdk:enable-asset-metadata': true } });
  const stack = new cdk.Stack(app, 'ConvoyEmulator', {
    env: { account: '000000000000', region: 'us-east-1' },
  });
  new Convoy(stack, 'Convoy', {
    kubeconfigPath: options.kubeconfigPath,
    ...(options.installationNamespace !== undefined
      ? { installationNamespace: options.installationNamespace }
      : {}),
    ...(options.logLevel !== undefined ? { logLevel: options.logLevel } : {}),
    ...(options.props ?? {}),
  });
  const assembly = app.synth();
  const artifact = assembly.getStackByName('ConvoyEmulator');
  const template = JSON.parse(await readFile(artifact.templateFullPath, 'utf8')) as CfnTemplate;
  return { template, outdir };
}
