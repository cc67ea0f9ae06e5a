/**
 * The user's own kubeconfig, found and merged as kubectl does, parsed by @kubernetes/client-node:
 * --kubeconfig alone; else every file of $KUBECONFIG that exists, merged (the first file to name
 * a cluster, user or context wins, and the first current-context set wins); else ~/.kube/config.
 * Relative file paths, a relative exec command with a slash and `tokenFile` are resolved against
 * the folder of the file that names them.
 *
 * Everything kubectl accepts is kept (exec plugins, auth-provider, certificate and token files,
 * proxy-url, impersonation): this is the user's own machine and identity. A kubeconfig stored in
 * a Cluster's Secret is never loaded here (kubeconfig.ts fromStoredKubeconfigYaml, which refuses
 * those fields; docs/security.md).
 */
import { readFileSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { KubeConfig, type Cluster, type Context, type User } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { KubeconfigError, NoCurrentClusterError } from './kubeconfig.ts';

// Which files: kubeconfig-files.ts (light, so the CLI can decide before loading client-node).
export { userKubeconfigFiles, type UserKubeconfigOptions } from './kubeconfig-files.ts';

/** Loads and merges `files` (userKubeconfigFiles) into one client-node KubeConfig with its current context set. */
export function loadUserKubeConfig(files: readonly string[], context?: string): KubeConfig {
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext: string | undefined;
  for (const file of files) {
    const one = loadOne(file);
    for (const c of one.getClusters()) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of one.getUsers()) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of one.getContexts()) if (!contexts.has(c.name)) contexts.set(c.name, c);
    const named = one.getCurrentContext() as string | undefined;
    if (currentContext === undefined && named !== undefined && named !== '') currentContext = named;
  }
  const what =
    files.length === 1 ? `the kubeconfig ${files[0] ?? ''}` : `the kubeconfigs ${files.join(delimiter)}`;
  const chosen = context ?? currentContext;
  if (chosen === undefined) throw new NoCurrentClusterError(`${what} set no current-context; pass --context`);
  const ctx = contexts.get(chosen);
  if (ctx === undefined) throw new NoCurrentClusterError(`${what} has no context ${chosen}`);
  if (!clusters.has(ctx.cluster))
    throw new NoCurrentClusterError(
      `${what}: context ${chosen} names the cluster ${ctx.cluster}, which is not defined`,
    );
  if (ctx.user !== undefined && !users.has(ctx.user)) {
    throw new NoCurrentClusterError(
      `${what}: context ${chosen} names the user ${ctx.user}, which is not defined`,
    );
  }
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext: chosen,
  });
  return kc;
}

/** One file through client-node's parser, its paths made absolute, kubectl's `tokenFile` carried over. */
function loadOne(file: string): KubeConfig {
  const what = `the kubeconfig ${file}`;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new KubeconfigError(
      `cannot read ${what}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  const kc = new KubeConfig();
  let raw: unknown;
  try {
    raw = parseYaml(text);
    kc.loadFromString(text);
  } catch (error) {
    // Parser messages quote the text, which holds credentials: only client-node's own field messages pass.
    const message = (error as Error).message;
    throw new KubeconfigError(
      `${what} is not a valid kubeconfig${/^(clusters|users|contexts)\[\d+\]\.[\w.]+ is missing$/.test(message) ? `: ${message}` : ''}`,
    );
  }
  const folder = dirname(resolve(file));
  kc.makePathsAbsolute(folder);
  const tokenFiles = tokenFilesOf(raw);
  const users = kc.getUsers().map((user) => withLocalPaths(user, folder, tokenFiles.get(user.name)));
  kc.loadFromOptions({
    clusters: kc.getClusters(),
    users,
    contexts: kc.getContexts(),
    currentContext: kc.getCurrentContext(),
  });
  return kc;
}

/** kubectl's `users[].user.tokenFile` (client-node 2.0 reads only a `token-file` field, from the working directory). */
function tokenFilesOf(raw: unknown): Map<string, string> {
  const found = new Map<string, string>();
  const list = (raw as { users?: unknown } | null)?.users;
  if (!Array.isArray(list)) return found;
  for (const entry of list as { name?: unknown; user?: { tokenFile?: unknown } }[]) {
    if (
      typeof entry?.name === 'string' &&
      typeof entry.user?.tokenFile === 'string' &&
      entry.user.tokenFile !== ''
    ) {
      found.set(entry.name, entry.user.tokenFile);
    }
  }
  return found;
}

/**
 * The user with an exec command like `./bin/get-token` resolved against the kubeconfig's folder,
 * and a tokenFile as the `tokenFile` auth provider client-node's in-cluster config uses (read,
 * trimmed and re-read every minute by kubeconfig.ts). A token in the file itself wins, as in kubectl.
 */
function withLocalPaths(user: User, folder: string, tokenFile: string | undefined): User {
  const exec = user.exec as { command?: unknown } | null | undefined;
  if (exec && typeof exec.command === 'string' && exec.command.includes('/') && !isAbsolute(exec.command)) {
    return { ...user, exec: { ...exec, command: join(folder, exec.command) } };
  }
  if (tokenFile !== undefined && !user.token && !user.exec && !user.authProvider) {
    return {
      ...user,
      authProvider: {
        name: 'tokenFile',
        config: { tokenFile: isAbsolute(tokenFile) ? tokenFile : join(folder, tokenFile) },
      },
    };
  }
  return user;
}
