// The steps of `convoy dev` (dev-command.ts runs them in order): the cluster, the example servers,
// the identities of an install, the Lambda runtime's functions, the convoy runtime. Each step
// that starts something adds how to stop it to the stop steps, run last-in first-out.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../platform/logger.ts';
import { createToolLocator } from '../adapters/tools/binaries.ts';
import { QUEUE_LOOPS } from '../domain/runtime/queue-message.ts';
import { FUNCTIONS_USER, startControlPlane } from './control-plane.ts';
import type { DevArgs } from './dev-args.ts';
import { chooseCluster } from './dev-cluster.ts';
import { grantExampleDeployer, invalidExampleFiles, provideExampleSources } from './dev-examples.ts';
import { isAddressInUse, PortInUseError } from './dev-ports.ts';
import { withEgressAllow, type DevSettings } from './dev-settings.ts';
import { buildExampleRepos } from './example-repos.ts';
import { startGitHttpServer } from './git-http-server.ts';
import { prepareLambdaFunctions, type PreparedLambdaFunctions } from './lambda/lambda-functions.ts';
import { findLambdaRuntime } from './lambda/runtime-build.ts';
import { startExampleRegistry, withInsecureRegistry, type DevRegistry } from './oci-registry.ts';
import { startConvoyRuntime, type ConvoyRuntime } from './runtime.ts';
import { installShippedIdentities } from './shipped-identities.ts';
import { DEFAULT_DEV_API_PORT, devKubeconfigName, devStateDirHere } from './state-dir.ts';

const repoRoot = join(import.meta.dirname, '..');
/** The namespace of the install convoy dev plays: its Leases, the relay's and the functions' identities. */
export const INSTALLATION_NAMESPACE = 'convoy-system';

export type Say = (line: string) => void;

export interface StopStep {
  readonly what: string;
  readonly stop: () => Promise<void>;
}

/** What convoy dev started, stopped last-in first-out: the runtime (relay, pollers) before the control plane. */
export interface StopSteps {
  push(step: StopStep): void;
  /** Runs every stop step; a failure is logged and the others still run. `verbose`: each says how long it took. */
  stopAll(verbose: boolean): Promise<void>;
}

export function stopSteps(say: Say, logger: Logger): StopSteps {
  const stops: StopStep[] = [];
  return {
    push: (step) => void stops.push(step),
    stopAll: async (verbose) => {
      for (const { what, stop } of stops.reverse()) {
        const t = performance.now();
        await stop().then(
          () => verbose && say(`stopped ${what} (${Math.round(performance.now() - t)} ms)`),
          (e: unknown) => logger.error(`stopping ${what} failed`, { error: e as Error }),
        );
      }
    },
  };
}

export interface DevCluster {
  readonly kubeconfigPath: string;
  /** The embedded cluster's admin token (for the banner); undefined on a kubeconfig's cluster. */
  readonly adminToken: string | undefined;
  /** The embedded cluster's token of the functions' user; undefined: the functions get a ServiceAccount. */
  readonly functionsToken: string | undefined;
}

/** The embedded cluster (its kubeconfig written to the state dir), or the kubeconfig's cluster when that answers. */
export async function startCluster(args: DevArgs, stops: StopSteps, say: Say): Promise<DevCluster> {
  const choice = await chooseCluster({ embedded: args.embedded, kubeconfig: args.kubeconfig });
  if (choice.kind !== 'embedded') {
    say(`using the cluster of context ${choice.context} (${choice.server}) from ${choice.kubeconfigPath}`);
    return { kubeconfigPath: choice.kubeconfigPath, adminToken: undefined, functionsToken: undefined };
  }
  say(`starting the embedded cluster (${choice.why})`);
  const cp = await startControlPlane({
    extraUsers: [{ name: 'convoy-admin', groups: ['system:masters'] }],
    stopOnSignals: false,
  });
  // Never inside an installed package (read-only, replaced on upgrade): dev/state-dir.ts. One
  // file per run (its API port); another port's file goes with its cluster, the default one stays.
  const stateDir = devStateDirHere(repoRoot);
  const ownKubeconfig = join(stateDir, devKubeconfigName(args.apiPort, process.pid));
  stops.push({
    what: 'the embedded cluster',
    stop: async () => {
      await cp.stop();
      if (args.apiPort !== DEFAULT_DEV_API_PORT) await rm(ownKubeconfig, { force: true });
    },
  });
  say(
    `embedded cluster ready: apiserver in ${cp.startupMs} ms, controllers and ${cp.nodeNames.length} simulated nodes ${cp.clusterReadyMs} ms later`,
  );
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeFile(ownKubeconfig, cp.kubeconfigYaml, { mode: 0o600 });
  return {
    kubeconfigPath: ownKubeconfig,
    adminToken: cp.tokens['convoy-admin'],
    functionsToken: cp.tokens[FUNCTIONS_USER.name],
  };
}

/**
 * The example repositories served by the Git server (a GitRepository per repo), and the OCI
 * registry beside it when it can start; the settings with that registry allowed over plain HTTP
 * and both servers in the egress allow list.
 */
export async function startExampleServers(
  kc: KubeConfig,
  args: DevArgs,
  stops: StopSteps,
  say: Say,
): Promise<{
  examples: { names: readonly string[] };
  git: { url: string };
  oci: DevRegistry | undefined;
  settings: DevSettings;
}> {
  const examplesDir = args.examplesDir;
  for (const p of await invalidExampleFiles(examplesDir)) {
    say(
      `example ${join(relative(process.cwd(), examplesDir) || '.', p.file)} is not valid YAML (${p.message}); it is served as is`,
    );
  }
  const examples = await buildExampleRepos(join(examplesDir, 'repos'));
  stops.push({ what: 'the example repositories', stop: () => examples.remove() });
  const git = await startGitHttpServer({ projectRoot: examples.root, port: args.gitPort }).catch(
    (err: unknown) => {
      throw isAddressInUse(err) ? new PortInUseError(args.gitPort, '--git-port') : err;
    },
  );
  stops.push({ what: 'the Git server', stop: () => git.stop() });
  await provideExampleSources(kc, git.url, examples.names);
  let settings = args.settings;
  // The OCI registry beside the Git server; its host is allowed over plain HTTP.
  const oci: DevRegistry | undefined = await startExampleRegistry({
    port: args.ociPort,
    examplesDir,
    helm: async () => (await createToolLocator().locate()).helm,
    say,
  });
  if (oci !== undefined) {
    stops.push({ what: 'the OCI registry', stop: () => oci.stop() });
    settings = {
      ...settings,
      tenancy: {
        ...settings.tenancy,
        insecureRegistries: withInsecureRegistry(settings.tenancy.insecureRegistries, oci.host),
      },
    };
  }
  // The egress policy refuses loopback: convoy dev's own Git server and registry are allowed, no other local port.
  const ownServers = [new URL(git.url).host, ...(oci !== undefined ? [oci.host] : [])];
  settings = {
    ...settings,
    tenancy: { ...settings.tenancy, egressAllow: withEgressAllow(settings.tenancy.egressAllow, ownServers) },
  };
  return { examples, git, oci, settings };
}

/** The identities of an install (never admin for a loop), then the examples tenant's own rights. */
export async function installIdentities(
  kc: KubeConfig,
  settings: DevSettings,
  functionsToken: string | undefined,
  say: Say,
): Promise<Awaited<ReturnType<typeof installShippedIdentities>>> {
  const identities = await installShippedIdentities(kc, {
    namespace: INSTALLATION_NAMESPACE,
    ...settings,
    functionsToken,
  });
  const deployer = settings.tenancy.defaultServiceAccount;
  if (deployer !== undefined && deployer !== '') await grantExampleDeployer(kc, deployer);
  say(
    `the relay acts as ServiceAccount ${INSTALLATION_NAMESPACE}/convoy-relay, the functions as ${functionsToken !== undefined ? 'the group convoy:functions' : `ServiceAccount ${INSTALLATION_NAMESPACE}/convoy-functions (bound like the group convoy:functions)`}; tenant namespaces: ${settings.tenancy.tenantNamespaces.join(', ')}`,
  );
  return identities;
}

/** --runtime lambda: the construct's template synthesized, its functions' bundles and settings ready for the emulator. */
export async function prepareLambda(
  args: DevArgs,
  settings: DevSettings,
  stops: StopSteps,
  say: Say,
): Promise<PreparedLambdaFunctions> {
  const { level, lambdaSlots, maxRenderObjects } = args;
  findLambdaRuntime();
  const t = performance.now();
  say(
    "synthesizing the Convoy construct's template for the Lambda runtime (its functions' settings and bundles)",
  );
  const lambda = await prepareLambdaFunctions({
    installationNamespace: INSTALLATION_NAMESPACE,
    tenancy: { ...settings.tenancy },
    logLevel: level,
    ...(lambdaSlots !== undefined ? { maxSlots: lambdaSlots } : {}),
    ...(maxRenderObjects !== undefined ? { props: { maxRenderObjects } } : {}),
    onLine: (loop, slot, line) => {
      // The functions' own log lines; the emulator's (rapid, START/END/REPORT) only at debug.
      if (level === 'debug' || line.startsWith('{')) process.stderr.write(`${loop}[${slot}] ${line}\n`);
    },
  });
  stops.push({ what: 'the Lambda runtime folder', stop: () => lambda.dispose() });
  const fn = lambda.functions;
  say(
    `Lambda runtime: template synthesized in ${Math.round(performance.now() - t)} ms; ${QUEUE_LOOPS.map((l) => `${l} ${fn[l].memorySize} MB, ${fn[l].timeoutSeconds} s, batch ${fn[l].eventSource.batchSize}, concurrency ${Math.min(fn[l].eventSource.maximumConcurrency ?? 1000, lambdaSlots ?? Infinity)}`).join('; ')}`,
  );
  return lambda;
}

/** The relay, the function pollers (or the Lambda emulator) and the HTTP API; a taken port names its flag. */
export async function startRuntime(
  kc: KubeConfig,
  logger: Logger,
  args: DevArgs,
  identities: Awaited<ReturnType<typeof installShippedIdentities>>,
  lambda: PreparedLambdaFunctions | undefined,
  notificationReceiver?: Parameters<typeof startConvoyRuntime>[0]['notificationReceiver'],
): Promise<ConvoyRuntime> {
  const { awsPort, apiPort, maxRenderObjects } = args;
  return startConvoyRuntime({
    ...(notificationReceiver !== undefined ? { notificationReceiver } : {}),
    kc,
    logger,
    awsPort,
    apiPort,
    namespace: INSTALLATION_NAMESPACE,
    identities,
    settings: identities.settings,
    ...(maxRenderObjects !== undefined ? { maxRenderObjects } : {}),
    ...(lambda !== undefined ? lambdaRuntimeOptions(lambda) : {}),
    ...(process.env['CONVOY_GIT_WEBHOOK_SECRET']
      ? { gitWebhookSecret: process.env['CONVOY_GIT_WEBHOOK_SECRET'] }
      : {}),
  }).catch((err: unknown) => {
    throw isAddressInUse(err)
      ? new PortInUseError(
          /aws|fauxqs/i.test(String(err)) ? awsPort : apiPort,
          /aws|fauxqs/i.test(String(err)) ? '--aws-port' : '--api-port',
        )
      : err;
  });
}

/** The queues as the template makes them, and the functions under the emulator instead of the pollers. */
function lambdaRuntimeOptions(
  lambda: PreparedLambdaFunctions,
): Pick<
  Parameters<typeof startConvoyRuntime>[0],
  'visibilityTimeoutSeconds' | 'maxReceiveCount' | 'functions'
> {
  return {
    visibilityTimeoutSeconds: lambda.queue.visibilityTimeoutSeconds,
    ...(lambda.queue.maxReceiveCount !== undefined ? { maxReceiveCount: lambda.queue.maxReceiveCount } : {}),
    functions: (context) => lambda.start(context),
  };
}
