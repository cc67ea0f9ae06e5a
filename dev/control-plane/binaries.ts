// Where the etcd and kube-apiserver binaries come from: KUBEBUILDER_ASSETS or the build cache.
import { accessSync, constants as fsConstants } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ControlPlaneBinariesNotFoundError } from './errors.ts';

export const DEFAULT_K8S_VERSION = 'v1.34.4';
export const DEFAULT_ETCD_VERSION = 'v3.6.16';
export const DEFAULT_KWOK_VERSION = 'v0.8.0';
const BUILD_SCRIPT = 'bash scripts/build-control-plane.sh';

export interface ControlPlaneBinaries {
  /** The folder both binaries were found in. */
  readonly dir: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  /** Where they came from: the KUBEBUILDER_ASSETS folder or the per-user build cache. */
  readonly source: 'KUBEBUILDER_ASSETS' | 'cache';
}

/**
 * Finds etcd and kube-apiserver: KUBEBUILDER_ASSETS first, then the versioned build cache
 * `${XDG_CACHE_HOME:-~/.cache}/convoy/control-plane/<k8s>-<etcd>/` that
 * scripts/build-control-plane.sh fills. Throws ControlPlaneBinariesNotFoundError otherwise.
 */
export function locateControlPlaneBinaries(env: NodeJS.ProcessEnv = process.env): ControlPlaneBinaries {
  const has = (dir: string): boolean =>
    isExecutable(join(dir, 'etcd')) && isExecutable(join(dir, 'kube-apiserver'));
  const assets = env.KUBEBUILDER_ASSETS;
  if (assets && has(assets)) {
    return {
      dir: assets,
      etcd: join(assets, 'etcd'),
      kubeApiserver: join(assets, 'kube-apiserver'),
      source: 'KUBEBUILDER_ASSETS',
    };
  }
  const k8s = env.CONVOY_K8S_VERSION || DEFAULT_K8S_VERSION;
  const etcd = env.CONVOY_ETCD_VERSION || DEFAULT_ETCD_VERSION;
  const kwok = env.CONVOY_KWOK_VERSION || DEFAULT_KWOK_VERSION;
  const cacheRoot = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  const cached = join(cacheRoot, 'convoy', 'control-plane', `${k8s}-${etcd}-kwok-${kwok}`);
  if (has(cached)) {
    return {
      dir: cached,
      etcd: join(cached, 'etcd'),
      kubeApiserver: join(cached, 'kube-apiserver'),
      source: 'cache',
    };
  }
  const assetsNote = assets
    ? `KUBEBUILDER_ASSETS is set to ${assets} but that folder lacks an executable 'etcd' and 'kube-apiserver'`
    : 'KUBEBUILDER_ASSETS is not set';
  throw new ControlPlaneBinariesNotFoundError(
    `No etcd/kube-apiserver binaries found: ${assetsNote}, and the build cache ${cached} does not hold both. ` +
      `Either run \`${BUILD_SCRIPT}\` (builds kube-apiserver ${k8s} and etcd ${etcd} from Go modules into that cache; ` +
      `CONVOY_K8S_VERSION / CONVOY_ETCD_VERSION pick other versions), or set KUBEBUILDER_ASSETS to a folder holding ` +
      `'etcd' and 'kube-apiserver' (for example from setup-envtest).`,
  );
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}
