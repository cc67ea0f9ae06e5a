// `convoy dev`: everything on one machine, no AWS account.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { createLogger, type Logger } from '../platform/logger.ts';
import { TenancySettingsError } from '../domain/tenancy/settings.ts';
import { ManifestError } from '../infra/relay-manifests.ts';
import { ControlPlaneBinariesNotFoundError, FUNCTIONS_USER, installCrds, startControlPlane } from './control-plane.ts';
import { chooseCluster, UnusableKubeconfigError } from './dev-cluster.ts';
import { EXAMPLES_NAMESPACE, grantExampleDeployer, invalidExampleFiles, provideExampleSources } from './dev-examples.ts';
import { devSettings, devSettingsUsage, withEgressAllow, type DevSettings } from './dev-settings.ts';
import { assertPortsFree, isAddressInUse, PortInUseError, type NamedPort } from './dev-ports.ts';
import { buildExampleRepos } from './example-repos.ts';
import { startGitHttpServer } from './git-http-server.ts';
import { startExampleRegistry, withInsecureRegistry, type DevRegistry } from './oci-registry.ts';
import { createToolLocator } from '../adapters/tools/binaries.ts';
import { startConvoyRuntime } from './runtime.ts';
import { prepareLambdaFunctions, type PreparedLambdaFunctions } from './lambda/lambda-functions.ts';
import { findLambdaRuntime, LambdaRuntimeMissingError } from './lambda/runtime-build.ts';
import { SynthError } from './lambda/synth.ts';
import { installShippedIdentities } from './shipped-identities.ts';
import { watchShutdown } from './shutdown.ts';
import { removeStaleDirs } from './stale-dirs.ts';
import { DEFAULT_DEV_API_PORT, devKubeconfigName, devStateDirHere, isCheckout } from './state-dir.ts';
import { validMaxObjects } from '../domain/reconcile/render-limits.ts';
import { QUEUE_LOOPS } from '../domain/runtime/queue-message.ts';
import { withSharedConnections } from './kube-connections.ts';

const repoRoot = join(import.meta.dirname, '..');
const INSTALLATION_NAMESPACE = 'convoy-system';

export const devUsage = `convoy dev [--embedded | --kubeconfig <file>] [--api-port 8480] [--git-port 8481] [--oci-port 8482] [--aws-port 0]
           [--examples <dir>] [--log-level info] [--tenant-namespaces a,b] [--open-tenancy]
           [--runtime in-process|lambda [--lambda-slots N]] …

  Without --embedded or --kubeconfig: the current kubeconfig context when its cluster answers,
  otherwise the embedded cluster (convoy dev says which and why).

  --embedded     start the embedded cluster: a real etcd, kube-apiserver, kube-controller-manager
                 and kube-scheduler, plus simulated nodes (KWOK; no container really runs). Its
                 kubeconfig is written to .convoy/kubeconfig in a checkout, else to
                 $XDG_STATE_HOME/convoy/kubeconfig (~/.local/state/convoy); with another --api-port
                 than 8480 to kubeconfig-<port> there, removed when convoy dev stops (two runs at
                 once never share one file). Built by \`npm run control-plane\`.
  --kubeconfig   use the current context of this kubeconfig (the cluster must answer)
  --api-port     the HTTP API (sync, pin, renders, verdicts, /metrics)
  --git-port     the Git server for examples/repos; convoy dev creates a GitRepository per repo in
                 the ${EXAMPLES_NAMESPACE} namespace pointing at it, so examples/ work with any port.
                 It and the OCI registry are in the egress allow list (CONVOY_EGRESS_ALLOW adds
                 more): Releases may not reach any other loopback or private address
  --oci-port     the local OCI registry (distribution's registry, built by scripts/build-oci-registry.sh),
                 plain HTTP, allowed in CONVOY_INSECURE_REGISTRIES; convoy dev pushes examples/oci's
                 chart (helm push) and manifests artifact (flux push artifact's format) to it.
                 Without the binary, or with the port taken, convoy dev says so and skips only those
  --aws-port     the embedded SQS/S3 server (0: any free port)
  --examples     the examples folder (default: examples/ of this checkout)
  --runtime      in-process (default, fast): the functions' handlers run in this process, fed by
                 pollers. lambda: the three functions run as their bundles under the Lambda runtime
                 (the AWS Runtime Interface Emulator + the Node runtime interface client), with the
                 handler, memory, timeout, environment and SQS event source mapping (batch size,
                 window, maximum concurrency) of the Convoy construct's synthesized template, as AWS
                 runs them. Built once by scripts/build-lambda-runtime.sh; needs aws-cdk-lib.
  --lambda-slots with --runtime lambda: at most N concurrent invocations (emulators) per function,
                 below the template's maximum concurrency (default: the template's)
  --max-render-objects
                 objects one render may hold (default 10000, or CONVOY_MAX_RENDER_OBJECTS); a larger
                 render ends Applied False/DeployFailed at Rendering and nothing is applied

  convoy dev acts as an install does: the relay with its ServiceAccount's token, the functions as
  the convoy:functions group, both under the RBAC of deploy/ and the chart (never admin), with the
  installation settings in ConfigMap convoy-relay-config of convoy-system. Locked down by default:
${devSettingsUsage}

  Ctrl-C / SIGTERM: the relay gives up its Lease, then everything stops (a few seconds).
  A Pod labelled kwok.convoy.dev/fail: "true" fails on the embedded cluster (a Job's Pod exits 1,
  others crash-loop). Git push webhooks (POST /v1/hooks/git) need CONVOY_GIT_WEBHOOK_SECRET.`;

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
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        embedded: { type: 'boolean', default: false },
        kubeconfig: { type: 'string' },
        'api-port': { type: 'string', default: String(DEFAULT_DEV_API_PORT) },
        'git-port': { type: 'string', default: '8481' },
        'oci-port': { type: 'string', default: '8482' },
        'aws-port': { type: 'string', default: '0' },
        examples: { type: 'string', default: join(repoRoot, 'examples') },
        'log-level': { type: 'string', default: 'info' },
        'tenant-namespaces': { type: 'string' },
        'default-service-account': { type: 'string' },
        'in-cluster-namespaces': { type: 'string' },
        'cross-namespace-refs': { type: 'boolean', default: false },
        'open-tenancy': { type: 'boolean', default: false },
        'watch-secrets': { type: 'boolean', default: false },
        runtime: { type: 'string', default: 'in-process' },
        'lambda-slots': { type: 'string' },
        'max-render-objects': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (err) {
    console.error(`convoy dev: ${err instanceof Error ? err.message : String(err)} (convoy dev --help)`);
    return 2;
  }
  if (values.help) {
    console.log(devUsage);
    return 0;
  }
  const ports: NamedPort[] = [];
  for (const flag of ['api-port', 'git-port', 'aws-port'] as const) {
    const port = Number(values[flag]);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      console.error(`convoy dev: --${flag} ${values[flag]}: must be a port number (0-65535)`);
      return 2;
    }
    ports.push({ port, flag: `--${flag}` });
  }
  if (values.embedded && values.kubeconfig !== undefined) {
    console.error('convoy dev: --embedded and --kubeconfig exclude each other');
    return 2;
  }
  const runtimeKind = values.runtime;
  if (runtimeKind !== 'in-process' && runtimeKind !== 'lambda') {
    console.error(`convoy dev: --runtime ${runtimeKind}: must be in-process or lambda`);
    return 2;
  }
  const lambdaSlots = values['lambda-slots'] === undefined ? undefined : Number(values['lambda-slots']);
  if (lambdaSlots !== undefined && (!Number.isInteger(lambdaSlots) || lambdaSlots < 1 || runtimeKind !== 'lambda')) {
    console.error(`convoy dev: --lambda-slots ${values['lambda-slots']}: a positive integer, with --runtime lambda`);
    return 2;
  }
  // The flag, else CONVOY_MAX_RENDER_OBJECTS, else the functions' default (domain/reconcile/render-limits.ts).
  const maxRenderText = values['max-render-objects'] ?? process.env['CONVOY_MAX_RENDER_OBJECTS'];
  const maxRenderObjects = maxRenderText === undefined || maxRenderText === '' ? undefined : Number(maxRenderText);
  if (maxRenderObjects !== undefined && !validMaxObjects(maxRenderObjects)) {
    console.error(`convoy dev: --max-render-objects (or CONVOY_MAX_RENDER_OBJECTS) ${maxRenderText}: must be a whole number of at least 1`);
    return 2;
  }
  const level = values['log-level'];
  if (level !== 'debug' && level !== 'info' && level !== 'warn' && level !== 'error') {
    console.error(`convoy dev: --log-level ${level}: must be debug, info, warn or error`);
    return 2;
  }
  let settings: DevSettings;
  try {
    settings = devSettings(values, process.env, EXAMPLES_NAMESPACE);
  } catch (err) {
    if (!(err instanceof TenancySettingsError)) throw err;
    console.error(`convoy dev: ${err.message}`);
    return 2;
  }
  const [apiPort, gitPort, awsPort] = ports.map((p) => p.port) as [number, number, number];
  const ociPort = Number(values['oci-port']);
  if (!Number.isInteger(ociPort) || ociPort < 1 || ociPort > 65535) {
    console.error(`convoy dev: --oci-port ${values['oci-port']}: must be a port number (1-65535)`);
    return 2;
  }
  const logger = createLogger({ base: { app: 'convoy-dev' }, level });
  const shutdown = watchShutdown();
  const say = (line: string): void => void process.stderr.write(`convoy dev: ${line}\n`);

  /** Stop steps, run last-in first-out: the runtime (relay, pollers) before the control plane. */
  const stops: { what: string; stop: () => Promise<void> }[] = [];
  const stopAll = async (verbose: boolean): Promise<void> => {
    for (const { what, stop } of stops.reverse()) {
      const t = performance.now();
      await stop().then(
        () => verbose && say(`stopped ${what} (${Math.round(performance.now() - t)} ms)`),
        (e: unknown) => logger.error(`stopping ${what} failed`, { error: e as Error }),
      );
    }
  };
  const stopped = (): boolean => shutdown.signal.aborted;

  try {
    for (const dir of await removeStaleDirs()) say(`removed ${dir} (left behind by a convoy dev that was killed)`);
    await assertPortsFree(ports);

    const choice = await chooseCluster({ embedded: values.embedded, kubeconfig: values.kubeconfig });
    let kubeconfigPath: string;
    let adminToken: string | undefined;
    let functionsToken: string | undefined;
    if (choice.kind === 'embedded') {
      say(`starting the embedded cluster (${choice.why})`);
      const cp = await startControlPlane({
        extraUsers: [{ name: 'convoy-admin', groups: ['system:masters'] }],
        stopOnSignals: false,
      });
      // Never inside an installed package (read-only, replaced on upgrade): dev/state-dir.ts. One
      // file per run (its API port); another port's file goes with its cluster, the default one stays.
      const stateDir = devStateDirHere(repoRoot);
      const ownKubeconfig = join(stateDir, devKubeconfigName(apiPort, process.pid));
      stops.push({
        what: 'the embedded cluster',
        stop: async () => {
          await cp.stop();
          if (apiPort !== DEFAULT_DEV_API_PORT) await rm(ownKubeconfig, { force: true });
        },
      });
      say(`embedded cluster ready: apiserver in ${cp.startupMs} ms, controllers and ${cp.nodeNames.length} simulated nodes ${cp.clusterReadyMs} ms later`);
      await mkdir(stateDir, { recursive: true, mode: 0o700 });
      kubeconfigPath = ownKubeconfig;
      await writeFile(kubeconfigPath, cp.kubeconfigYaml, { mode: 0o600 });
      adminToken = cp.tokens['convoy-admin'];
      functionsToken = cp.tokens[FUNCTIONS_USER.name];
    } else {
      say(`using the cluster of context ${choice.context} (${choice.server}) from ${choice.kubeconfigPath}`);
      kubeconfigPath = choice.kubeconfigPath;
    }
    if (stopped()) return 0;
    await installCrds(kubeconfigPath, join(repoRoot, 'config', 'crds'));
    const kc = withSharedConnections(new KubeConfig());
    kc.loadFromFile(kubeconfigPath);

    const examplesDir = values.examples;
    for (const p of await invalidExampleFiles(examplesDir)) {
      say(`example ${join(relative(process.cwd(), examplesDir) || '.', p.file)} is not valid YAML (${p.message}); it is served as is`);
    }
    const examples = await buildExampleRepos(join(examplesDir, 'repos'));
    stops.push({ what: 'the example repositories', stop: () => examples.remove() });
    const git = await startGitHttpServer({ projectRoot: examples.root, port: gitPort }).catch((err: unknown) => {
      throw isAddressInUse(err) ? new PortInUseError(gitPort, '--git-port') : err;
    });
    stops.push({ what: 'the Git server', stop: () => git.stop() });
    await provideExampleSources(kc, git.url, examples.names);
    // The OCI registry beside the Git server; its host is allowed over plain HTTP.
    const oci: DevRegistry | undefined = await startExampleRegistry({ port: ociPort, examplesDir, helm: async () => (await createToolLocator().locate()).helm, say });
    if (oci !== undefined) {
      stops.push({ what: 'the OCI registry', stop: () => oci.stop() });
      settings = { ...settings, tenancy: { ...settings.tenancy, insecureRegistries: withInsecureRegistry(settings.tenancy.insecureRegistries, oci.host) } };
    }
    // The egress policy refuses loopback: convoy dev's own Git server and registry are allowed, no other local port.
    const ownServers = [new URL(git.url).host, ...(oci !== undefined ? [oci.host] : [])];
    settings = { ...settings, tenancy: { ...settings.tenancy, egressAllow: withEgressAllow(settings.tenancy.egressAllow, ownServers) } };
    // The identities of an install (never admin for a loop), then the examples tenant's own rights.
    const identities = await installShippedIdentities(kc, { namespace: INSTALLATION_NAMESPACE, ...settings, functionsToken });
    const deployer = settings.tenancy.defaultServiceAccount;
    if (deployer !== undefined && deployer !== '') await grantExampleDeployer(kc, deployer);
    say(`the relay acts as ServiceAccount ${INSTALLATION_NAMESPACE}/convoy-relay, the functions as ${functionsToken !== undefined ? 'the group convoy:functions' : `ServiceAccount ${INSTALLATION_NAMESPACE}/convoy-functions (bound like the group convoy:functions)`}; tenant namespaces: ${settings.tenancy.tenantNamespaces.join(', ')}`);
    if (stopped()) return 0;

    let lambda: PreparedLambdaFunctions | undefined;
    if (runtimeKind === 'lambda') {
      findLambdaRuntime();
      const t = performance.now();
      say('synthesizing the Convoy construct\'s template for the Lambda runtime (its functions\' settings and bundles)');
      lambda = await prepareLambdaFunctions({
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
      const folder = lambda;
      stops.push({ what: 'the Lambda runtime folder', stop: () => folder.dispose() });
      const fn = lambda.functions;
      say(`Lambda runtime: template synthesized in ${Math.round(performance.now() - t)} ms; ${QUEUE_LOOPS.map((l) => `${l} ${fn[l].memorySize} MB, ${fn[l].timeoutSeconds} s, batch ${fn[l].eventSource.batchSize}, concurrency ${Math.min(fn[l].eventSource.maximumConcurrency ?? 1000, lambdaSlots ?? Infinity)}`).join('; ')}`);
    }

    const runtime = await startConvoyRuntime({
      kc,
      logger,
      awsPort,
      apiPort,
      namespace: INSTALLATION_NAMESPACE,
      identities,
      settings: identities.settings,
      ...(maxRenderObjects !== undefined ? { maxRenderObjects } : {}),
      ...(lambda !== undefined ? lambdaRuntimeOptions(lambda) : {}),
      ...(process.env['CONVOY_GIT_WEBHOOK_SECRET'] ? { gitWebhookSecret: process.env['CONVOY_GIT_WEBHOOK_SECRET'] } : {}),
    }).catch((err: unknown) => {
      throw isAddressInUse(err) ? new PortInUseError(/aws|fauxqs/i.test(String(err)) ? awsPort : apiPort, /aws|fauxqs/i.test(String(err)) ? '--aws-port' : '--api-port') : err;
    });
    stops.push({ what: 'the relay and the function pollers', stop: () => runtime.stop() });

    printBanner({ kubeconfigPath, adminToken, apiUrl: runtime.apiUrl, gitUrl: git.url, repos: examples.names, aws: runtime.awsEndpoint, examplesDir, oci, egressAllow: settings.tenancy.egressAllow ?? '' });
    if (!stopped()) await new Promise<void>((resolve) => shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
    return 0;
  } catch (err) {
    return reportStartFailure(err, say, logger);
  } finally {
    const reason = shutdown.reason();
    const t = performance.now();
    if (reason !== undefined) say(`${reason}: stopping`);
    await stopAll(reason !== undefined);
    if (reason !== undefined) say(`stopped in ${Math.round(performance.now() - t)} ms`);
    shutdown.dispose();
  }
}

/** The queues as the template makes them, and the functions under the emulator instead of the pollers. */
function lambdaRuntimeOptions(lambda: PreparedLambdaFunctions): Pick<Parameters<typeof startConvoyRuntime>[0], 'visibilityTimeoutSeconds' | 'maxReceiveCount' | 'functions'> {
  return {
    visibilityTimeoutSeconds: lambda.queue.visibilityTimeoutSeconds,
    ...(lambda.queue.maxReceiveCount !== undefined ? { maxReceiveCount: lambda.queue.maxReceiveCount } : {}),
    functions: (context) => lambda.start(context),
  };
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
  if (err instanceof ControlPlaneBinariesNotFoundError || err instanceof LambdaRuntimeMissingError || err instanceof SynthError) {
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
      ...(b.oci ? [`  OCI registry ${b.oci.host}   (${b.oci.pushed.join(', ') || 'empty'}; plain HTTP allowed)`] : []),
      `  egress       Releases may reach public addresses and ${b.egressAllow.split(',').join(', ')} (convoy dev's own servers${b.egressAllow.split(',').length > (b.oci ? 2 : 1) ? ' and CONVOY_EGRESS_ALLOW' : ''}); other loopback and private addresses are refused`,
      '',
      `  try:  kubectl --kubeconfig ${b.kubeconfigPath} apply -f ${examples}`,
      `        ${isCheckout(repoRoot) ? 'node bin/convoy.ts' : 'convoy'} wait --kubeconfig ${b.kubeconfigPath} ${EXAMPLES_NAMESPACE}/hello`,
      `        kubectl --kubeconfig ${b.kubeconfigPath} get releases -A`,
      ...(b.oci && b.oci.pushed.length > 0 ? [`        kubectl --kubeconfig ${b.kubeconfigPath} apply -f ${join(examples, 'oci')}   (Releases reading the OCI registry)`] : []),
      '',
    ].join('\n'),
  );
}
