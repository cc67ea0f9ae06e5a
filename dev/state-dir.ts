/**
 * Where `convoy dev` keeps what it writes for the user (the embedded cluster's kubeconfig): never
 * inside an installed package, which may be read-only (a global install under /usr) and is
 * replaced by every upgrade. Like kind, k3d and minikube, which keep cluster state under the
 * user's home, an installed convoy uses the XDG state folder: `$XDG_STATE_HOME/convoy`, or
 * `~/.local/state/convoy` (the spec's default; a relative XDG_STATE_HOME is ignored, as the spec
 * says). A checkout keeps its `.convoy/` (gitignored, next to `npm run image`'s output).
 * docs/decisions.md, "`convoy dev` state outside the package".
 */
import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, sep } from 'node:path';

export interface StateDirInput {
  /** The package's root (the repository, or node_modules/convoy/dist of an installed copy). */
  packageRoot: string;
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  /** Whether packageRoot is a git checkout rather than an installed package. */
  checkout: boolean;
}

/** The folder for `convoy dev`'s files (not created here). */
export function devStateDir(input: StateDirInput): string {
  if (input.checkout) return join(input.packageRoot, '.convoy');
  const xdg = input.env['XDG_STATE_HOME'];
  const base = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(input.home, '.local', 'state');
  return join(base, 'convoy');
}

/** A checkout: a .git next to the sources and not under node_modules (npm link resolves to the checkout). */
export function isCheckout(packageRoot: string): boolean {
  const real = existsSync(packageRoot) ? realpathSync(packageRoot) : packageRoot;
  return existsSync(join(real, '.git')) && !real.split(sep).includes('node_modules');
}

/** devStateDir for this process: its environment and home. */
export function devStateDirHere(packageRoot: string): string {
  return devStateDir({ packageRoot, env: process.env, home: homedir(), checkout: isCheckout(packageRoot) });
}

/** `convoy dev`'s default --api-port. */
export const DEFAULT_DEV_API_PORT = 8480;

/**
 * The file name of the embedded cluster's kubeconfig in the state folder, one per running
 * `convoy dev`: `kubeconfig` on the default --api-port, `kubeconfig-<api port>` on another,
 * `kubeconfig-pid<pid>` with --api-port 0. Two runs at once cannot share an API port, so they
 * never write one file: with one shared file the second run's kubeconfig replaced the first's, and
 * the first run's user (or test) reached a cluster that stopped with the second.
 */
export function devKubeconfigName(apiPort: number, pid: number): string {
  if (apiPort === DEFAULT_DEV_API_PORT) return 'kubeconfig';
  return apiPort === 0 ? `kubeconfig-pid${pid}` : `kubeconfig-${apiPort}`;
}
