// `convoy dev`'s command line: its usage, and its flags parsed and checked. A flag convoy dev
// refuses is one line on stderr and exit code 2, before anything starts.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { validMaxObjects } from '../domain/reconcile/render-limits.ts';
import { TenancySettingsError } from '../domain/tenancy/settings.ts';
import type { LogLevel } from '../platform/logger.ts';
import { EXAMPLES_NAMESPACE } from './dev-examples.ts';
import type { NamedPort } from './dev-ports.ts';
import { devSettings, devSettingsUsage, type DevSettings } from './dev-settings.ts';
import { DEFAULT_DEV_API_PORT } from './state-dir.ts';

const repoRoot = join(import.meta.dirname, '..');

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

/** What convoy dev runs with, every flag checked. */
export interface DevArgs {
  readonly embedded: boolean;
  readonly kubeconfig: string | undefined;
  readonly examplesDir: string;
  readonly level: LogLevel;
  readonly runtimeKind: 'in-process' | 'lambda';
  readonly lambdaSlots: number | undefined;
  readonly maxRenderObjects: number | undefined;
  readonly settings: DevSettings;
  /** --api-port, --git-port and --aws-port, checked free before anything starts. */
  readonly ports: readonly NamedPort[];
  readonly apiPort: number;
  readonly gitPort: number;
  readonly awsPort: number;
  readonly ociPort: number;
}

/**
 * convoy dev's flags, checked; or the exit code when convoy dev goes no further: 0 after --help,
 * 2 for flags it refuses (said on stderr).
 */
export function parseDevArgs(argv: string[]): DevArgs | number {
  let values: DevFlags;
  try {
    values = parseFlags(argv);
  } catch (err) {
    console.error(`convoy dev: ${err instanceof Error ? err.message : String(err)} (convoy dev --help)`);
    return 2;
  }
  if (values.help) {
    console.log(devUsage);
    return 0;
  }
  return checkDevArgs(values);
}

function parseFlags(argv: string[]) {
  return parseArgs({
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
}

type DevFlags = ReturnType<typeof parseFlags>;

/** The flags' values checked in the order of the usage line, the first refused one said on stderr (exit code 2). */
function checkDevArgs(values: DevFlags): DevArgs | number {
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
  if (
    lambdaSlots !== undefined &&
    (!Number.isInteger(lambdaSlots) || lambdaSlots < 1 || runtimeKind !== 'lambda')
  ) {
    console.error(
      `convoy dev: --lambda-slots ${values['lambda-slots']}: a positive integer, with --runtime lambda`,
    );
    return 2;
  }
  // The flag, else CONVOY_MAX_RENDER_OBJECTS, else the functions' default (domain/reconcile/render-limits.ts).
  const maxRenderText = values['max-render-objects'] ?? process.env['CONVOY_MAX_RENDER_OBJECTS'];
  const maxRenderObjects =
    maxRenderText === undefined || maxRenderText === '' ? undefined : Number(maxRenderText);
  if (maxRenderObjects !== undefined && !validMaxObjects(maxRenderObjects)) {
    console.error(
      `convoy dev: --max-render-objects (or CONVOY_MAX_RENDER_OBJECTS) ${maxRenderText}: must be a whole number of at least 1`,
    );
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
  return {
    embedded: values.embedded,
    kubeconfig: values.kubeconfig,
    examplesDir: values.examples,
    level,
    runtimeKind,
    lambdaSlots,
    maxRenderObjects,
    settings,
    ports,
    apiPort,
    gitPort,
    awsPort,
    ociPort,
  };
}
