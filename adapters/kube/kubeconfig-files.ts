/**
 * Which kubeconfig files the user's tools read (kubectl's rules), and a fast path for the common
 * case: one file whose chosen context needs nothing but what kubeconfig.ts understands (a token,
 * a token file, client certificates, a CA, basic auth) is loaded without @kubernetes/client-node,
 * whose import costs ~300 ms of every CLI call. Anything else — several files to merge, exec or
 * auth-provider plugins, proxy-url, impersonation, a context that does not resolve — returns
 * undefined and goes through client-node's loader (user-kubeconfig.ts), with its messages.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { fromKubeconfigFile, KubeconfigError, type KubeClientConfig } from './kubeconfig.ts';

export interface UserKubeconfigOptions {
  /** --kubeconfig: this file only, no merging. */
  readonly kubeconfig?: string | undefined;
  /** --context: instead of current-context. */
  readonly context?: string | undefined;
  readonly env?: NodeJS.ProcessEnv | undefined;
}

/** The files kubectl would read, in merge order; [] when there is none (the caller may be in a pod). */
export function userKubeconfigFiles(opts: UserKubeconfigOptions = {}): string[] {
  const env = opts.env ?? process.env;
  if (opts.kubeconfig !== undefined) {
    if (!existsSync(opts.kubeconfig))
      throw new KubeconfigError(`--kubeconfig ${opts.kubeconfig} does not exist`);
    return [opts.kubeconfig];
  }
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
  if (listed.length > 0) {
    const present = listed.filter((p) => existsSync(p));
    if (present.length === 0)
      throw new KubeconfigError(`KUBECONFIG names ${listed.join(delimiter)}, which does not exist`);
    return present;
  }
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  return existsSync(home) && statSync(home).isFile() ? [home] : [];
}

type Mapping = Record<string, unknown>;
const isMapping = (value: unknown): value is Mapping =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const entry = (list: unknown, name: unknown, field: string): Mapping | undefined => {
  if (!Array.isArray(list) || typeof name !== 'string') return undefined;
  const found = (list as unknown[]).find((e) => isMapping(e) && e.name === name);
  return isMapping(found) && isMapping(found[field]) ? found[field] : undefined;
};
/** User fields only client-node's loader handles. */
const PLUGIN_USER_FIELDS = ['exec', 'auth-provider', 'as', 'as-uid', 'as-groups', 'as-user-extra'];

/** The config of `file` without client-node when its chosen context is plain; undefined otherwise. */
export function plainKubeconfig(
  files: readonly string[],
  context: string | undefined,
): KubeClientConfig | undefined {
  if (files.length !== 1) return undefined;
  const [file = ''] = files;
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(file, 'utf8'));
  } catch {
    return undefined; // client-node's loader says what is wrong
  }
  if (!isMapping(raw)) return undefined;
  const chosen = context ?? raw['current-context'];
  const ctx = entry(raw.contexts, chosen, 'context');
  if (ctx === undefined) return undefined;
  const cluster = entry(raw.clusters, ctx.cluster, 'cluster');
  if (cluster === undefined || (cluster['proxy-url'] !== undefined && cluster['proxy-url'] !== null))
    return undefined;
  let user: Mapping = {};
  if (ctx.user !== undefined && ctx.user !== null) {
    const found = entry(raw.users, ctx.user, 'user');
    if (found === undefined) return undefined;
    user = found;
  }
  if (PLUGIN_USER_FIELDS.some((f) => user[f] !== undefined && user[f] !== null)) return undefined;
  return fromKubeconfigFile(file, { context: typeof chosen === 'string' ? chosen : undefined });
}
