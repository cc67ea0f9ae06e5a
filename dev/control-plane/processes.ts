// Child processes of the control plane: free ports, spawning with a log file, stopping
// (SIGTERM then SIGKILL), and the detached reaper that cleans up after a killed parent.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { corruptBinaryMessage } from './binaries.ts';
import { ControlPlaneStartError } from './errors.ts';

export interface SpawnedProcess {
  proc: ChildProcess;
  exited: Promise<void>;
}

export { freePorts } from './free-ports.ts';

/**
 * Spawns `bin` with its output appended to `logFile`, in a process group of its own: a Ctrl-C or a
 * SIGTERM to convoy's process group then reaches only convoy, which stops these in order (its
 * reaper kills them when convoy itself dies).
 */
export function spawnLogged(
  bin: string,
  args: string[],
  logFile: string,
  env?: NodeJS.ProcessEnv,
): SpawnedProcess {
  const fd = openSync(logFile, 'a');
  try {
    const proc = spawn(bin, args, { stdio: ['ignore', fd, fd], detached: true, ...(env ? { env } : {}) });
    const exited = new Promise<void>((ok) => {
      if (proc.exitCode !== null || proc.signalCode !== null) ok();
      proc.once('exit', () => ok());
      proc.once('error', () => ok()); // reported below (no pid) or by the readiness checks (exit before ready)
    });
    if (proc.pid === undefined) {
      throw new ControlPlaneStartError(
        corruptBinaryMessage(bin, 'it could not be started; is it a binary for this machine?'),
      );
    }
    return { proc, exited };
  } finally {
    closeSync(fd);
  }
}

/**
 * A detached `sh` loop that outlives a SIGKILLed parent: once the parent pid is gone it SIGKILLs
 * every pid listed in `<dir>/pids` (only while its command line still names `dir`, so a reused
 * pid is left alone), waits until they are gone, and removes `dir`.
 */
export function spawnReaper(dir: string): ChildProcess {
  const script = `
parent="$1"; dir="$2"
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  if [ -r "/proc/$1/stat" ] && grep -q ') Z ' "/proc/$1/stat" 2>/dev/null; then return 1; fi
  return 0
}
ours() {
  alive "$1" || return 1
  [ -r "/proc/$1/cmdline" ] || return 0
  tr '\\000' '\\n' < "/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$dir"
}
while alive "$parent"; do sleep 0.5; done
pids=""
[ -f "$dir/pids" ] && pids=$(cat "$dir/pids")
live=""
for p in $pids; do ours "$p" && live="$live $p"; done
# The data is thrown away, so there is nothing to shut down gracefully.
[ -n "$live" ] && kill -KILL $live 2>/dev/null
i=0
while [ -n "$live" ] && [ $i -lt 50 ]; do
  sleep 0.1; i=$((i + 1))
  still=""
  for p in $live; do ours "$p" && still="$still $p"; done
  live="$still"
done
rm -rf -- "$dir"
`;
  const proc = spawn('sh', ['-c', script, 'convoy-control-plane-reaper', String(process.pid), dir], {
    detached: true,
    stdio: 'ignore',
  });
  proc.unref();
  return proc;
}

export async function terminate(proc: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  signalQuietly(proc, 'SIGTERM');
  const timer = sleep(graceMs, 'timeout' as const);
  if ((await Promise.race([exited.then(() => 'exited' as const), timer])) === 'timeout') {
    signalQuietly(proc, 'SIGKILL');
    await exited;
  }
}

export function signalQuietly(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill(signal); // returns false when the process is already gone; that is fine here
}
