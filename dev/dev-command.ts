// `convoy dev`: everything on one machine, no AWS account. runDev reads as its steps: the flags
// (dev-args.ts), the cluster, the example servers, the install's identities, the runtime (those in
// dev-start.ts), the banner, then the wait for a signal and the stop of everything in reverse order.
import { join, relative } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger, type Logger } from '../platform/logger.ts';
import { ManifestError } from '../infra/relay-manifests.ts';
import { ControlPlaneBinariesNotFoundError, installCrds } from './control-plane.ts';
import { parseDevArgs } from './dev-args.ts';
import { UnusableKubeconfigError } from './dev-cluster.ts';
import { EXAMPLES_NAMESPACE } from './dev-examples.ts';
import { assertPortsFree, PortInUseError } from './dev-ports.ts';
import {
  installIdentities,
  prepareLambda,
  startCluster,
  startExampleServers,
  startRuntime,
  stopSteps,
} from './dev-start.ts';
import type { DevRegistry } from './oci-registry.ts';
import { LambdaRuntimeMissingError } from './lambda/runtime-build.ts';
import { SynthError } from './lambda/synth.ts';
import { watchShutdown } from './shutdown.ts';
import { removeStaleDirs } from './stale-dirs.ts';
import { isCheckout } from './state-dir.ts';
import { withSharedConnections } from './kube-connections.ts';
import { startNotificationReceiver, withNotificationReceiver } from './notification-receiver.ts';

export { devUsage } from './dev-args.ts';

const repoRoot = join(import.meta.dirname, '..');

/**
 * Runs `convoy dev` until a signal; sets process.exitCode (0 stopped cleanly, 1 failed, 2 bad
 * usage or a busy port) and returns it. Once everything is stopped, the process ends at once
 * even if a library left a socket or timer behind.
 */
export async function devCommand(argv: string[]): Promise<number> {
  const code = await runDev(argv);
  process.exitCode = code;
  setTimeout(() => process.exit(code), 50).unref();
  return code;
}

async function runDev(argv: string[]): Promise<number> {
  const args = parseDevArgs(argv);
  if (typeof args === 'number') return args;
  const logger = createLogger({ base: { app: 'convoy-dev' }, level: args.level });
  const shutdown = watchShutdown();
  const say = (line: string): void => void process.stderr.write(`convoy dev: ${line}\n`);
  const stops = stopSteps(say, logger);
  const stopped = (): boolean => shutdown.signal.aborted;

  try {
    for (const dir of await removeStaleDirs()) {
      say(`removed ${dir} (left behind by a convoy dev that was killed)`);
    }
    await assertPortsFree(args.ports);
    const cluster = await startCluster(args, stops, say);
    if (stopped()) return 0;
    await installCrds(cluster.kubeconfigPath, join(repoRoot, 'config', 'crds'));
    const kc = withSharedConnections(new KubeConfig());
    kc.loadFromFile(cluster.kubeconfigPath);
    const servers = await startExampleServers(kc, args, stops, say);
    const notifications = await startNotificationReceiver();
    stops.push({ what: 'the notification receiver', stop: () => notifications.stop() });
    const settings = withNotificationReceiver(servers.settings, notifications);
    const identities = await installIdentities(kc, settings, cluster.functionsToken, say);
    if (stopped()) return 0;
    const lambda =
      args.runtimeKind === 'lambda' ? await prepareLambda(args, settings, stops, say) : undefined;
    const runtime = await startRuntime(kc, logger, args, identities, lambda, notifications);
    stops.push({ what: 'the relay and the function pollers', stop: () => runtime.stop() });

    printBanner({
      kubeconfigPath: cluster.kubeconfigPath,
      adminToken: cluster.adminToken,
      apiUrl: runtime.apiUrl,
      gitUrl: servers.git.url,
      repos: servers.examples.names,
      aws: runtime.awsEndpoint,
      examplesDir: args.examplesDir,
      oci: servers.oci,
      egressAllow: settings.tenancy.egressAllow ?? '',
      notifications: notifications.url,
    });
    if (!stopped()) {
      await new Promise<void>((resolve) =>
        shutdown.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    }
    return 0;
  } catch (err) {
    return reportStartFailure(err, say, logger);
  } finally {
    const reason = shutdown.reason();
    const t = performance.now();
    if (reason !== undefined) say(`${reason}: stopping`);
    await stops.stopAll(reason !== undefined);
    if (reason !== undefined) say(`stopped in ${Math.round(performance.now() - t)} ms`);
    shutdown.dispose();
  }
}

/** One line for the failures a user can fix (exit 2 for usage, 1 otherwise); the stack only for the unexpected. */
function reportStartFailure(err: unknown, say: (line: string) => void, logger: Logger): number {
  if (err instanceof PortInUseError) {
    say(err.message);
    return 2;
  }
  if (err instanceof ManifestError) {
    say(err.message);
    return 2;
  }
  if (err instanceof UnusableKubeconfigError) {
    say(err.message);
    return 2;
  }
  if (
    err instanceof ControlPlaneBinariesNotFoundError ||
    err instanceof LambdaRuntimeMissingError ||
    err instanceof SynthError
  ) {
    say(err.message);
    return 1;
  }
  logger.error('convoy dev could not start', { error: err as Error });
  return 1;
}

function printBanner(b: {
  kubeconfigPath: string;
  adminToken: string | undefined;
  apiUrl: string | undefined;
  gitUrl: string;
  repos: readonly string[];
  aws: string;
  examplesDir: string;
  oci: DevRegistry | undefined;
  egressAllow: string;
  notifications: string;
}): void {
  const examples = relative(process.cwd(), b.examplesDir) || '.';
  console.log(
    [
      '',
      'convoy dev is running',
      `  kubeconfig   ${b.kubeconfigPath}`,
      `  HTTP API     ${b.apiUrl ?? '(off)'}${b.adminToken ? `   (Authorization: Bearer ${b.adminToken})` : ''}`,
      `  Git server   ${b.gitUrl}   (${b.repos.map((n) => `${n}.git`).join(', ')}; GitRepositories ${b.repos.join(', ')} in ${EXAMPLES_NAMESPACE})`,
      `  SQS/S3       ${b.aws}`,
      ...(b.oci
        ? [`  OCI registry ${b.oci.host}   (${b.oci.pushed.join(', ') || 'empty'}; plain HTTP allowed)`]
        : []),
      `  notifications ${b.notifications}   (webhooks: ${b.notifications}/webhook/…, Slack: ${b.notifications}/services/T/B/x; GET ${b.notifications}/deliveries lists what arrived)`,
      `  egress       Releases may reach public addresses and ${b.egressAllow.split(',').join(', ')} (convoy dev's own servers${b.egressAllow.split(',').length > (b.oci ? 3 : 2) ? ' and CONVOY_EGRESS_ALLOW' : ''}); other loopback and private addresses are refused`,
      '',
      `  try:  kubectl --kubeconfig ${b.kubeconfigPath} apply -f ${examples}`,
      `        ${isCheckout(repoRoot) ? 'node bin/convoy.ts' : 'convoy'} wait --kubeconfig ${b.kubeconfigPath} ${EXAMPLES_NAMESPACE}/hello`,
      `        kubectl --kubeconfig ${b.kubeconfigPath} get releases -A`,
      ...(b.oci && b.oci.pushed.length > 0
        ? [
            `        kubectl --kubeconfig ${b.kubeconfigPath} apply -f ${join(examples, 'oci')}   (Releases reading the OCI registry)`,
          ]
        : []),
      '',
    ].join('\n'),
  );
}
