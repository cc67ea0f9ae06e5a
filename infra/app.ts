/**
 * The convoy CDK app: `node infra/app.ts` synthesizes into $CDK_OUTDIR (the
 * CDK CLI sets it) or a temporary directory; with the CLI: `cd infra && cdk synth`
 * (infra/cdk.json writes to ../cdk.out).
 *
 * Context (cdk -c key=value):
 *   managementClusterName   EKS cluster of the relay (Pod Identity association)
 *   kubeconfigSecretName    Secrets Manager secret holding the management kubeconfig
 *   installationNamespace   default convoy-system
 *   relayImage              image of the relay Deployment
 */
import { App } from 'aws-cdk-lib';
import { ConvoyStack } from './stack.ts';

const app = new App();
const context = (key: string): string | undefined => {
  const value: unknown = app.node.tryGetContext(key);
  return typeof value === 'string' && value !== '' ? value : undefined;
};
const managementClusterName = context('managementClusterName');
const kubeconfigSecretName = context('kubeconfigSecretName');
const installationNamespace = context('installationNamespace');
const relayImage = context('relayImage');

new ConvoyStack(app, 'Convoy', {
  env: { account: process.env['CDK_DEFAULT_ACCOUNT'], region: process.env['CDK_DEFAULT_REGION'] },
  description: 'convoy: queues, functions, render store, relay IAM and alarms',
  ...(kubeconfigSecretName === undefined ? {} : { kubeconfigSecretName }),
  convoy: {
    ...(managementClusterName === undefined ? {} : { managementClusterName }),
    ...(installationNamespace === undefined ? {} : { installationNamespace }),
    ...(relayImage === undefined ? {} : { relayImage }),
  },
});
app.synth();
