// `convoy dev`: everything on one machine, no AWS account.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger } from '../functions/runtime/logger.ts';
import { installCrds, startControlPlane, type ControlPlane } from './control-plane.ts';
import { buildExampleRepos } from './example-repos.ts';
import { startGitHttpServer } from './git-http-server.ts';
import { startConvoyRuntime } from './runtime.ts';

const repoRoot = join(import.meta.dirname, '..');

export const devUsage = `convoy dev [--embedded] [--api-port 8480] [--git-port 8481] [--aws-port 0] [--log-level info]

  --embedded     start a local etcd + kube-apiserver (the test control plane) instead of
                 using the current kubeconfig; its kubeconfig is written to .convoy/kubeconfig
  --api-port     the HTTP API (sync, pin, renders, verdicts, /metrics)
  --git-port     the Git server for examples/repos (the examples point at 8481)
  --aws-port     the embedded SQS/S3 server (0: any free port)

  Git push webhooks (POST /v1/hooks/git) need CONVOY_GIT_WEBHOOK_SECRET in the environment.`;

export async function devCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      embedded: { type: 'boolean', default: false },
      'api-port': { type: 'string', default: '8480' },
      'git-port': { type: 'string', default: '8481' },
      'aws-port': { type: 'string', default: '0' },
      'log-level': { type: 'string', default: 'info' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(devUsage);
    return;
  }
  const level = values['log-level'] as 'debug' | 'info' | 'warn' | 'error';
  const logger = createLogger({ base: { app: 'convoy-dev' }, level });
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((e: unknown) => logger.error('stop failed', { error: e as Error }));
  };

  try {
    let kubeconfigPath: string;
    let adminToken: string | undefined;
    if (values.embedded) {
      const cp: ControlPlane = await startControlPlane({
        extraUsers: [{ name: 'convoy-admin', groups: ['system:masters'] }],
        stopOnSignals: false,
      });
      stops.push(() => cp.stop());
      await mkdir(join(repoRoot, '.convoy'), { recursive: true });
      kubeconfigPath = join(repoRoot, '.convoy', 'kubeconfig');
      await writeFile(kubeconfigPath, cp.kubeconfigYaml, { mode: 0o600 });
      adminToken = cp.tokens['convoy-admin'];
    } else {
      const kc = new KubeConfig();
      kc.loadFromDefault();
      kubeconfigPath = process.env['KUBECONFIG']?.split(':')[0] ?? join(process.env['HOME'] ?? '', '.kube', 'config');
      if (kc.getCurrentCluster() === null) throw new Error('no current kubeconfig context: use --embedded or set KUBECONFIG');
    }
    await installCrds(kubeconfigPath, join(repoRoot, 'config', 'crds'));
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);

    const examples = await buildExampleRepos(join(repoRoot, 'examples', 'repos'));
    stops.push(() => examples.remove());
    const git = await startGitHttpServer({ projectRoot: examples.root, port: Number(values['git-port']) });
    stops.push(() => git.stop());

    const runtime = await startConvoyRuntime({
      kc,
      logger,
      awsPort: Number(values['aws-port']),
      apiPort: Number(values['api-port']),
      ...(process.env['CONVOY_GIT_WEBHOOK_SECRET'] ? { gitWebhookSecret: process.env['CONVOY_GIT_WEBHOOK_SECRET'] } : {}),
    });
    stops.push(() => runtime.stop());

    console.log(
      [
        '',
        'convoy dev is running',
        `  kubeconfig   ${kubeconfigPath}`,
        `  HTTP API     ${runtime.apiUrl ?? '(off)'}${adminToken ? `   (Authorization: Bearer ${adminToken})` : ''}`,
        `  Git server   ${git.url}   (${examples.names.map((n) => `${n}.git`).join(', ')})`,
        `  SQS/S3       ${runtime.awsEndpoint}`,
        '',
        `  try:  kubectl --kubeconfig ${kubeconfigPath} apply -f ${join(repoRoot, 'examples')}`,
        `        kubectl --kubeconfig ${kubeconfigPath} get releases -A`,
        '',
      ].join('\n'),
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  } finally {
    await stopAll();
  }
}
