// Runs the real `convoy` command line (bin/convoy.ts) as a child process, the way a user would.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'convoy.ts');

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Wall time from spawn to exit. */
  readonly ms: number;
}

export interface RunningCli {
  /** Resolves when the process exits. */
  readonly done: Promise<CliRun>;
  /** Whether it has exited yet. */
  exited(): boolean;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** What it wrote to stdout so far. */
  stdout(): string;
  kill(): void;
}

/** Starts `convoy <args>` with KUBECONFIG=`kubeconfig` (or none when null); HOME points nowhere so ~/.kube/config never counts. */
export function startConvoy(
  args: readonly string[],
  kubeconfig: string | null,
  env: Record<string, string> = {},
): RunningCli {
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: '/nonexistent-home',
      ...(kubeconfig === null ? {} : { KUBECONFIG: kubeconfig }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let finished = false;
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      finished = true;
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
  return {
    done,
    exited: () => finished,
    stderr: () => stderr,
    stdout: () => stdout,
    kill: () => child.kill(),
  };
}

export const runConvoy = (
  args: readonly string[],
  kubeconfig: string | null,
  env: Record<string, string> = {},
): Promise<CliRun> => startConvoy(args, kubeconfig, env).done;
