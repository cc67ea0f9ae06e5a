/**
 * `convoy install --print [flags]`: the install manifests (CRDs first, then the relay's
 * Namespace, ServiceAccount, RBAC, ConfigMap, Deployment, PodDisruptionBudget, NetworkPolicy
 * and Service) as YAML on stdout, for `| kubectl apply --server-side -f -`. The same objects as
 * deploy/ (both come from infra/relay-manifests.ts), with the queue URLs and settings given here.
 * It prints only: applying stays with kubectl (or Helm: charts/convoy).
 */
import { parseArgs } from 'node:util';
import { deployYaml, PLACEHOLDER_QUEUE_URLS, type DeployOptions } from '../infra/install-files.ts';

export const installUsage = `convoy install --print --image IMAGE [--reconcile-queue-url URL --drift-queue-url URL --health-queue-url URL]
               [--fleet-queue-url URL]
               [--region R] [--render-bucket B] [--namespace convoy-system]
               [--replicas 2] [--log-level info] [--irsa-role-arn ARN] [--no-crds]
               [--tenant-namespaces a,b] [--watch-secrets] [--default-service-account default]
               [--in-cluster-namespaces a,b|*] [--cross-namespace-refs] [--insecure-registries host:port,…|*]
  prints the install manifests (the same objects as deploy/); apply with kubectl apply --server-side -f -

  --image                the relay image (default: $CONVOY_RELAY_IMAGE; required). It is not published:
                         build it with npm run image (or docker build -f image/Dockerfile .) and push it
                         to a registry of yours (README, "Install on any cluster")

  --tenant-namespaces    namespaces whose Releases may act on this cluster as their ServiceAccount
                         (the functions may impersonate ServiceAccounts there only); never kube-* or --namespace
  --fleet-queue-url      the fleet function's queue (ReleaseSets); without it the relay does not watch
                         ReleaseSets and sends them nothing
  --watch-secrets        let the relay list/watch Secrets (it can then read their data) to react to
                         labelled Secrets at once; off: they are picked up at the Release's next interval
  --insecure-registries  OCI registries (host[:port], comma-separated, or *) Releases may reach over plain
                         HTTP with insecure: true (CONVOY_INSECURE_REGISTRIES); default none`;

export interface InstallIo {
  out(text: string): void;
  err(line: string): void;
}

const processIo: InstallIo = {
  out: (text) => process.stdout.write(text),
  err: (line) => process.stderr.write(`${line}\n`),
};

class InstallUsageError extends Error {
  override name = 'InstallUsageError';
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** The one line a missing image is: what to build, where to push, which flag to give. */
export const MISSING_IMAGE =
  '--image is required: the relay image is not published; build it (npm run image, or docker build -f image/Dockerfile .), push it to a registry of yours and pass --image <registry>/convoy-relay:<tag> (or set CONVOY_RELAY_IMAGE)';

function optionsOf(argv: readonly string[], env: NodeJS.ProcessEnv): DeployOptions & { print: boolean } {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      print: { type: 'boolean', default: false },
      'reconcile-queue-url': { type: 'string' },
      'drift-queue-url': { type: 'string' },
      'health-queue-url': { type: 'string' },
      'fleet-queue-url': { type: 'string' },
      region: { type: 'string' },
      'render-bucket': { type: 'string' },
      namespace: { type: 'string', short: 'n' },
      image: { type: 'string' },
      replicas: { type: 'string' },
      'log-level': { type: 'string' },
      'irsa-role-arn': { type: 'string' },
      'no-crds': { type: 'boolean', default: false },
      'tenant-namespaces': { type: 'string' },
      'watch-secrets': { type: 'boolean', default: false },
      'default-service-account': { type: 'string' },
      'in-cluster-namespaces': { type: 'string' },
      'cross-namespace-refs': { type: 'boolean', default: false },
      'insecure-registries': { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new InstallUsageError(`unexpected argument "${positionals[0] ?? ''}"`);
  const queues = [values['reconcile-queue-url'], values['drift-queue-url'], values['health-queue-url']];
  const given = queues.filter((q) => q !== undefined).length;
  if (given !== 0 && given !== 3) {
    throw new InstallUsageError(
      '--reconcile-queue-url, --drift-queue-url and --health-queue-url go together: give all three or none',
    );
  }
  for (const [flag, url] of [
    ['--reconcile-queue-url', queues[0]],
    ['--drift-queue-url', queues[1]],
    ['--health-queue-url', queues[2]],
    ['--fleet-queue-url', values['fleet-queue-url']],
  ] as const) {
    if (url !== undefined && !URL.canParse(url))
      throw new InstallUsageError(`${flag}: "${url}" is not a URL`);
  }
  let replicas: number | undefined;
  if (values.replicas !== undefined) {
    replicas = Number(values.replicas);
    if (!Number.isInteger(replicas) || replicas < 1)
      throw new InstallUsageError(`--replicas: "${values.replicas}" is not a positive integer`);
  }
  const logLevel = values['log-level'];
  if (logLevel !== undefined && !(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new InstallUsageError(`--log-level: "${logLevel}" is not one of ${LOG_LEVELS.join(', ')}`);
  }
  const image = values.image ?? (env.CONVOY_RELAY_IMAGE || undefined);
  const namespace = values.namespace;
  if (namespace !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace)) {
    throw new InstallUsageError(`--namespace: "${namespace}" is not a valid namespace name (RFC 1123 label)`);
  }
  const tenantNamespaces = values['tenant-namespaces']
    ?.split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const tenancy = {
    ...(tenantNamespaces !== undefined ? { tenantNamespaces } : {}),
    ...(values['default-service-account'] !== undefined
      ? { defaultServiceAccount: values['default-service-account'] }
      : {}),
    ...(values['in-cluster-namespaces'] !== undefined
      ? { inClusterNamespaces: values['in-cluster-namespaces'] }
      : {}),
    ...(values['cross-namespace-refs'] ? { crossNamespaceRefs: true } : {}),
    ...(values['insecure-registries'] !== undefined
      ? { insecureRegistries: values['insecure-registries'] }
      : {}),
  };
  return {
    print: values.print ?? false,
    tenancy,
    ...(values['watch-secrets'] ? { watchSecrets: true } : {}),
    ...(given === 3 || values['fleet-queue-url'] !== undefined
      ? {
          queueUrls: {
            ...(given === 3
              ? { reconcile: queues[0] ?? '', drift: queues[1] ?? '', health: queues[2] ?? '' }
              : PLACEHOLDER_QUEUE_URLS),
            ...(values['fleet-queue-url'] !== undefined ? { fleet: values['fleet-queue-url'] } : {}),
          },
        }
      : {}),
    ...(values.region !== undefined ? { region: values.region } : {}),
    ...(values['render-bucket'] !== undefined ? { renderBucket: values['render-bucket'] } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(image !== undefined ? { image } : {}),
    ...(replicas !== undefined ? { replicas } : {}),
    ...(logLevel !== undefined ? { logLevel: logLevel as (typeof LOG_LEVELS)[number] } : {}),
    ...(values['irsa-role-arn'] !== undefined ? { irsaRoleArn: values['irsa-role-arn'] } : {}),
    ...(values['no-crds'] ? { crds: [] } : {}),
  };
}

/** Exit code: 0 printed, 2 a usage error (one line on stderr). */
export function installCommand(
  argv: readonly string[],
  io: InstallIo = processIo,
  env: NodeJS.ProcessEnv = process.env,
): number {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      io.out(`${installUsage}\n`);
      return 0;
    }
    const { print, ...options } = optionsOf(argv, env);
    if (!print) {
      throw new InstallUsageError(
        'convoy install only prints (--print); pipe it to kubectl apply --server-side -f -, or use the Helm chart',
      );
    }
    if (options.image === undefined) throw new InstallUsageError(MISSING_IMAGE);
    io.out(deployYaml(options));
    return 0;
  } catch (error) {
    io.err(`convoy install: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
}
