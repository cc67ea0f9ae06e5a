// Which cluster `convoy dev` uses: --embedded forces the embedded one; --kubeconfig names an
// existing cluster, which must answer; otherwise the current kubeconfig context when its cluster
// answers /version, else the embedded cluster (and convoy dev says why).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig, VersionApi } from '@kubernetes/client-node';

export type ClusterChoice =
  | { readonly kind: 'embedded'; readonly why: string }
  | {
      readonly kind: 'existing';
      readonly kubeconfigPath: string;
      readonly context: string;
      readonly server: string;
    };

export class UnusableKubeconfigError extends Error {
  override name = 'UnusableKubeconfigError';
}

const PROBE_TIMEOUT_MS = 3_000;

export async function chooseCluster(opts: {
  readonly embedded: boolean;
  readonly kubeconfig: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
}): Promise<ClusterChoice> {
  if (opts.embedded) return { kind: 'embedded', why: '--embedded' };
  const env = opts.env ?? process.env;
  if (opts.kubeconfig !== undefined) {
    const found = await probe(opts.kubeconfig);
    if (found.ok) return found.choice;
    throw new UnusableKubeconfigError(`--kubeconfig ${opts.kubeconfig}: ${found.why}`);
  }
  const path =
    env['KUBECONFIG']?.split(delimiter).find((p) => p !== '') ??
    join(env['HOME'] || homedir(), '.kube', 'config');
  if (!existsSync(path))
    return {
      kind: 'embedded',
      why: `no kubeconfig (${env['KUBECONFIG'] ? `KUBECONFIG=${path}` : path} does not exist)`,
    };
  const found = await probe(path);
  return found.ok
    ? found.choice
    : { kind: 'embedded', why: `the kubeconfig ${path} is not usable: ${found.why}` };
}

async function probe(
  path: string,
): Promise<{ ok: true; choice: ClusterChoice } | { ok: false; why: string }> {
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(path);
  } catch (err) {
    return { ok: false, why: `cannot be read (${err instanceof Error ? err.message : String(err)})` };
  }
  const cluster = kc.getCurrentCluster();
  if (!kc.currentContext || cluster === null) return { ok: false, why: 'it has no current context' };
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      kc.makeApiClient(VersionApi).getCode(),
      new Promise((_, fail) => {
        timer = setTimeout(
          () => fail(new Error(`no answer within ${PROBE_TIMEOUT_MS / 1000} s`)),
          PROBE_TIMEOUT_MS,
        );
      }),
    ]);
  } catch (err) {
    const text = err instanceof Error ? (err.message.split('\n')[0] ?? err.name) : String(err);
    return {
      ok: false,
      why: `context ${kc.currentContext} (${cluster.server}) does not answer /version: ${text}`,
    };
  } finally {
    clearTimeout(timer);
  }
  return {
    ok: true,
    choice: { kind: 'existing', kubeconfigPath: path, context: kc.currentContext, server: cluster.server },
  };
}
