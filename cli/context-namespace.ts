/**
 * The namespace a verb uses when -n is not given, as kubectl chooses it: the namespace of the
 * kubeconfig context (--context, else current-context; with several files, the first file that sets
 * current-context and the first that defines that context win, kubectl's merge rule), else, in a
 * pod with no kubeconfig, the ServiceAccount's namespace, else `default`. Read before the verb
 * connects; a kubeconfig that cannot be read is left for the connection to report.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { userKubeconfigFiles } from '../adapters/kube/kubeconfig-files.ts';
import type { GlobalFlags } from './args.ts';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

type Mapping = Record<string, unknown>;
const isMapping = (value: unknown): value is Mapping =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function readKubeconfig(file: string): Mapping | undefined {
  try {
    const raw: unknown = parseYaml(readFileSync(file, 'utf8'));
    return isMapping(raw) ? raw : undefined;
  } catch {
    return undefined; // the connection reads it again and says what is wrong with it
  }
}

/** The namespace of the chosen context, and the context's name; undefined when it sets none. */
export function contextNamespace(
  flags: Pick<GlobalFlags, 'kubeconfig' | 'context'>,
  env: NodeJS.ProcessEnv,
): { namespace: string; context: string } | undefined {
  let files: string[];
  try {
    files = userKubeconfigFiles({ kubeconfig: flags.kubeconfig, env });
  } catch {
    return undefined; // a missing --kubeconfig or KUBECONFIG file: the connection says so
  }
  if (files.length === 0) {
    if (env.KUBERNETES_SERVICE_HOST === undefined || !existsSync(SERVICE_ACCOUNT_NAMESPACE)) return undefined;
    const namespace = readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
    return namespace === '' ? undefined : { namespace, context: '(in-cluster)' };
  }
  const configs = files.map(readKubeconfig);
  const chosen =
    flags.context ??
    configs.map((c) => c?.['current-context']).find((v): v is string => typeof v === 'string' && v !== '');
  if (chosen === undefined) return undefined;
  for (const config of configs) {
    const contexts = config?.['contexts'];
    if (!Array.isArray(contexts)) continue;
    const found = (contexts as unknown[]).find((e) => isMapping(e) && e['name'] === chosen);
    if (!isMapping(found)) continue;
    const namespace = isMapping(found['context']) ? found['context']['namespace'] : undefined;
    return typeof namespace === 'string' && namespace !== '' ? { namespace, context: chosen } : undefined;
  }
  return undefined;
}
