/**
 * Stages the relay image's app folder from the packed package, exactly what a user installs:
 *   npm pack (prepack builds dist/) → extract package/ → npm ci --omit=dev --omit=peer
 * (npm install when no lock file is given) → image/prune-deps.ts (only what the relay loads). The result holds package.json, dist/ and the
 * production node_modules: what image/build-oci.ts puts at /app, and what image/Dockerfile builds.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pruneDependencies } from './prune-deps.ts';

const repoRoot = resolve(import.meta.dirname, '..');

export interface StageOptions {
  /** Scratch folder (replaced): the tarball and app/ go here. */
  readonly workDir: string;
  /** A tarball from `npm pack`; default: run `npm pack` in this repository now. */
  readonly tarball?: string;
  /** Lock file pinning the production dependencies; default this repository's package-lock.json. */
  readonly lockFile?: string | null;
}

export async function stageApp(options: StageOptions): Promise<{ appDir: string; tarball: string }> {
  const workDir = resolve(options.workDir);
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
  const npm = (args: string[], cwd: string): string =>
    execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  let tarball = options.tarball;
  if (tarball === undefined) {
    const name =
      npm(['pack', '--pack-destination', workDir, '--loglevel=error'], repoRoot).trim().split('\n').pop() ??
      '';
    tarball = join(workDir, name);
  }
  execFileSync('tar', ['-xzf', tarball, '-C', workDir]);
  const appDir = join(workDir, 'app');
  await rename(join(workDir, 'package'), appDir);
  const lock = options.lockFile === undefined ? join(repoRoot, 'package-lock.json') : options.lockFile;
  const common = [
    '--omit=dev',
    '--omit=peer',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
    '--prefer-offline',
    '--loglevel=error',
  ];
  if (lock !== null && existsSync(lock)) {
    await copyFile(lock, join(appDir, 'package-lock.json'));
    npm(['ci', ...common], appDir);
    await rm(join(appDir, 'package-lock.json'));
  } else {
    npm(['install', '--no-package-lock', ...common], appDir);
  }
  // npm also installs peers (aws-cdk-lib, …) that only the CDK construct and `convoy dev` use.
  pruneDependencies(appDir);
  return { appDir, tarball };
}
