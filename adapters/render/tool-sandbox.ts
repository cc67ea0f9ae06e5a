/**
 * The process side of the render sandbox: each helm or kubectl run gets a private, empty folder
 * of its own (mode 0700, removed afterwards) that is its HOME, working directory, TMPDIR and every
 * config/cache/data home, and an environment holding only those paths. Nothing is inherited from
 * convoy's process: no AWS_* credentials, KUBECONFIG, KUBERNETES_SERVICE_HOST (in-cluster
 * config), tokens, PATH, proxies or the user's helm repositories and plugins; the only proxy set
 * is one that refuses every connection.
 *
 * Where the OS allows it, a user+mount namespace would add a second wall; convoy does not use
 * one (docs/decisions.md "Render sandbox"): the Lambda runtime has neither `unshare` nor user
 * namespaces, so the checks of content-check.ts are what every render relies on.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ToolHome {
  /** The private folder: HOME and working directory of the tool. */
  dir: string;
  /** The tool's whole environment. */
  env: Record<string, string>;
}

export interface ToolHomeOptions {
  /** Where the private folder is made; default the OS temp folder (/tmp on Lambda). */
  tempDir?: string | undefined;
}

/**
 * A proxy that refuses every connection: port 0 cannot be listened on, so a connect to it fails at
 * once. Go's HTTP client (kustomize's `http(s)://` files) sends every request but loopback ones
 * through it; neither tool needs the network for a render.
 */
export const NO_NETWORK_PROXY = 'http://127.0.0.1:0';

/**
 * The environment of a tool whose private folder is `dir`. No PATH: `helm template` runs no other
 * program without post-renderers, and kustomize would only run `git`, for remote bases, which
 * convoy refuses (kustomize.ts) — without PATH there is no git to clone with either.
 */
export function toolEnvironment(dir: string): Record<string, string> {
  return {
    HOME: dir,
    TMPDIR: join(dir, 'tmp'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    XDG_DATA_HOME: join(dir, 'data'),
    HELM_CONFIG_HOME: join(dir, 'config', 'helm'),
    HELM_CACHE_HOME: join(dir, 'cache', 'helm'),
    HELM_DATA_HOME: join(dir, 'data', 'helm'),
    HELM_PLUGINS: join(dir, 'data', 'helm', 'plugins'),
    // A kubeconfig that does not exist: no cluster is ever contacted or named.
    KUBECONFIG: join(dir, 'no-kubeconfig'),
    // Were git ever found: no system or user config, never a credential prompt.
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    HTTP_PROXY: NO_NETWORK_PROXY,
    HTTPS_PROXY: NO_NETWORK_PROXY,
    http_proxy: NO_NETWORK_PROXY,
    https_proxy: NO_NETWORK_PROXY,
  };
}

/** Runs `use` with a fresh private tool folder, removed afterwards whatever happens. */
export async function withToolHome<T>(
  options: ToolHomeOptions,
  use: (home: ToolHome) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(join(options.tempDir ?? tmpdir(), 'convoy-render-'));
  try {
    await mkdir(join(dir, 'tmp'), { mode: 0o700 });
    return await use({ dir, env: toolEnvironment(dir) });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
