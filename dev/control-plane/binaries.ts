// Where the control-plane binaries come from: KUBEBUILDER_ASSETS or the build cache. etcd and
// kube-apiserver are always needed; kube-controller-manager, kube-scheduler and kwok (simulated
// nodes) only when the cluster runs its controllers (the default).
import { accessSync, closeSync, constants as fsConstants, openSync, readSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ControlPlaneBinariesNotFoundError } from './errors.ts';

export const DEFAULT_K8S_VERSION = 'v1.34.4';
export const DEFAULT_ETCD_VERSION = 'v3.6.16';
export const DEFAULT_KWOK_VERSION = 'v0.8.0';
/** The build script by its absolute path: scripts/ of the checkout, or dist/scripts/ of the installed package (scripts/build-package.ts copies it). */
export const BUILD_COMMAND = `bash ${join(import.meta.dirname, '..', '..', 'scripts', 'build-control-plane.sh')}`;

const CORE = ['etcd', 'kube-apiserver'] as const;
const CONTROLLERS = ['kube-controller-manager', 'kube-scheduler', 'kwok'] as const;
type BinaryName = (typeof CORE)[number] | (typeof CONTROLLERS)[number];

export interface ControlPlaneBinaries {
  /** The folder the binaries were found in. */
  readonly dir: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  /** Present when the folder holds all three (checked again, with a clear error, when they are needed). */
  readonly kubeControllerManager: string;
  readonly kubeScheduler: string;
  readonly kwok: string;
  /** Where they came from: the KUBEBUILDER_ASSETS folder or the per-user build cache. */
  readonly source: 'KUBEBUILDER_ASSETS' | 'cache';
}

/** The per-user build cache folder scripts/build-control-plane.sh fills, for these versions. */
export function controlPlaneCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const k8s = env.CONVOY_K8S_VERSION || DEFAULT_K8S_VERSION;
  const etcd = env.CONVOY_ETCD_VERSION || DEFAULT_ETCD_VERSION;
  const kwok = env.CONVOY_KWOK_VERSION || DEFAULT_KWOK_VERSION;
  const cacheRoot = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(cacheRoot, 'convoy', 'control-plane', `${k8s}-${etcd}-kwok-${kwok}`);
}

/**
 * Finds the binaries: KUBEBUILDER_ASSETS first (when it holds etcd and kube-apiserver), then the
 * versioned build cache `${XDG_CACHE_HOME:-~/.cache}/convoy/control-plane/<k8s>-<etcd>-kwok-<kwok>/`.
 * With `controllers` (default true) kube-controller-manager, kube-scheduler and kwok must be there too.
 * Each file must be an executable ELF binary or script; otherwise ControlPlaneBinariesNotFoundError
 * names the file and the build command.
 */
export function locateControlPlaneBinaries(
  env: NodeJS.ProcessEnv = process.env,
  opts: { readonly controllers?: boolean } = {},
): ControlPlaneBinaries {
  const assets = env.KUBEBUILDER_ASSETS;
  const cached = controlPlaneCacheDir(env);
  const dir = assets && CORE.every((b) => isExecutable(join(assets, b))) ? assets : cached;
  const needed: readonly BinaryName[] = opts.controllers === false ? CORE : [...CORE, ...CONTROLLERS];
  const missing = needed.filter((b) => !isExecutable(join(dir, b)));
  if (missing.length > 0) {
    const assetsNote = assets
      ? `KUBEBUILDER_ASSETS=${assets} lacks an executable 'etcd' and 'kube-apiserver', and `
      : '';
    throw new ControlPlaneBinariesNotFoundError(
      `${assetsNote}${missing.map((b) => join(dir, b)).join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing. ` +
        `Run \`${BUILD_COMMAND}\` (builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok ` +
        `from Go modules into ${cached}; Go >= 1.26; a few minutes), or set KUBEBUILDER_ASSETS to a folder holding them.`,
    );
  }
  for (const b of needed) assertLooksRunnable(join(dir, b));
  return {
    dir,
    etcd: join(dir, 'etcd'),
    kubeApiserver: join(dir, 'kube-apiserver'),
    kubeControllerManager: join(dir, 'kube-controller-manager'),
    kubeScheduler: join(dir, 'kube-scheduler'),
    kwok: join(dir, 'kwok'),
    source: dir === assets ? 'KUBEBUILDER_ASSETS' : 'cache',
  };
}

/** The message for a binary that is there but does not run (truncated download, wrong file). */
export function corruptBinaryMessage(file: string, why: string): string {
  return `${file} is not a working binary (${why}). ${rebuildHint(file)}`;
}

/** How to replace one damaged binary. */
export function rebuildHint(file: string): string {
  return `To rebuild it: \`rm ${file} && ${BUILD_COMMAND}\` (rebuilds only what is missing).`;
}

/** Throws when `file` is neither an ELF executable nor a script (e.g. a truncated or empty file). */
function assertLooksRunnable(file: string): void {
  const head = Buffer.alloc(4);
  let read = 0;
  const fd = openSync(file, 'r');
  try {
    read = readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  const elf = read === 4 && head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  const script = read >= 2 && head[0] === 0x23 && head[1] === 0x21; // "#!"
  if (!elf && !script) {
    const size = statSync(file).size;
    throw new ControlPlaneBinariesNotFoundError(
      corruptBinaryMessage(file, size === 0 ? 'the file is empty' : 'it is not an ELF executable'),
    );
  }
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, fsConstants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
