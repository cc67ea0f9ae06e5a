// Helpers of the package test for the installed CLI: `npm i -g` of the tarball into a folder of
// its own, and `convoy dev` from it, run outside the repository as a user runs them.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createToolLocator } from '../../adapters/tools/binaries.ts';

const run = promisify(execFile);

export interface GlobalInstall {
  /** `<prefix>/bin`: convoy and kubectl-convoy. */
  readonly binDir: string;
  /** The installed package folder (`<prefix>/lib/node_modules/convoy`). */
  readonly packageDir: string;
}

/** `npm install -g --prefix <prefix> <tarball>` (dependencies from npm's cache, as the CDK app test does). */
export async function installGlobally(tarball: string, prefix: string): Promise<GlobalInstall> {
  await run(
    'npm',
    [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      tarball,
    ],
    { maxBuffer: 16 << 20 },
  );
  return { binDir: join(prefix, 'bin'), packageDir: join(prefix, 'lib', 'node_modules', 'convoy') };
}

export interface DevRun {
  readonly proc: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number | null>;
}

/** Starts `<binDir>/convoy dev <args>` in `cwd`. */
export function startDev(
  binDir: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): DevRun {
  const proc = spawn(join(binDir, 'convoy'), ['dev', ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const dev: DevRun = {
    proc,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => proc.once('exit', (code) => resolve(code))),
  };
  proc.stdout?.on('data', (c: Buffer) => (dev.stdout += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (dev.stderr += c.toString()));
  return dev;
}

/** Waits for the banner (`convoy dev is running`); throws with its output when it exits first or takes too long. */
export async function devRunning(dev: DevRun, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!dev.stdout.includes('convoy dev is running')) {
    if (dev.proc.exitCode !== null || dev.proc.signalCode !== null)
      throw new Error(`convoy dev exited before running:\n${dev.stderr}\n${dev.stdout.slice(-2000)}`);
    if (Date.now() > deadline)
      throw new Error(`convoy dev did not start within ${timeoutMs} ms:\n${dev.stderr}`);
    await sleep(200);
  }
}

/** The kubeconfig `convoy dev` printed in its banner. */
export function devKubeconfig(dev: DevRun): string {
  const path = /kubeconfig\s+(\S+)/.exec(dev.stdout)?.[1];
  if (path === undefined) throw new Error(`convoy dev printed no kubeconfig:\n${dev.stdout}`);
  return path;
}

/** `kubectl apply` of the installed package's examples namespace and hello Release (dist/examples). */
export async function applyShippedHello(packageDir: string, kubeconfig: string): Promise<void> {
  const examples = join(packageDir, 'dist', 'examples');
  const { kubectl } = await createToolLocator().locate();
  await run(kubectl, [
    '--kubeconfig',
    kubeconfig,
    'apply',
    '-f',
    join(examples, '00-namespace.yaml'),
    '-f',
    join(examples, '10-hello-release.yaml'),
  ]);
}

/** SIGINT, then the exit code (convoy dev stops everything it started first). */
export async function stopDev(dev: DevRun): Promise<number | null> {
  if (dev.proc.exitCode === null && dev.proc.signalCode === null) dev.proc.kill('SIGINT');
  return dev.exited;
}
