// Helpers of the package test for the installed CLI: `npm i -g` of the tarball into a folder of
// its own, and `convoy dev` from it, run outside the repository as a user runs them.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface GlobalInstall {
  /** `<prefix>/bin`: convoy and kubectl-convoy. */
  readonly binDir: string;
  /** The installed package folder (`<prefix>/lib/node_modules/convoy`). */
  readonly packageDir: string;
}

/** `npm install -g --prefix <prefix> <tarball>` (dependencies from npm's cache, as the CDK app test does). */
export async function installGlobally(tarball: string, prefix: string): Promise<GlobalInstall> {
  await run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], { maxBuffer: 16 << 20 });
  return { binDir: join(prefix, 'bin'), packageDir: join(prefix, 'lib', 'node_modules', 'convoy') };
}

export interface DevRun {
  readonly proc: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number | null>;
}

/** Starts `<binDir>/convoy dev <args>` in `cwd`. */
export function startDev(binDir: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): DevRun {
  const proc = spawn(join(binDir, 'convoy'), ['dev', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const dev: DevRun = { proc, stdout: '', stderr: '', exited: new Promise((resolve) => proc.once('exit', (code) => resolve(code))) };
  proc.stdout?.on('data', (c: Buffer) => (dev.stdout += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (dev.stderr += c.toString()));
  return dev;
}

/** Waits for the banner (`convoy dev is running`); throws with its output when it exits first or takes too long. */
export async function devRunning(dev: DevRun, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!dev.stdout.includes('convoy dev is running')) {
    if (dev.proc.exitCode !== null || dev.proc.signalCode !== null) throw new Error(`convoy dev exited before running:\n${dev.stderr}\n${dev.stdout.slice(-2000)}`);
    if (Date.now() > deadline) throw new Error(`convoy dev did not start within ${timeoutMs} ms:\n${dev.stderr}`);
    await sleep(200);
  }
}
