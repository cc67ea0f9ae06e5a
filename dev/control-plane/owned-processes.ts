// The processes of one control plane and how they end: stopped in order by stop(), killed at once
// (with their temp dir removed) when this process exits or gets a signal first, and by the reaper
// when this process is SIGKILLed.
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, rmSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { signalQuietly, spawnLogged, spawnReaper, terminate, type SpawnedProcess } from './processes.ts';

/** SIGTERM, then SIGKILL after this long (kcm, scheduler, kwok and etcd exit within 0.1 s on SIGTERM). */
const STOP_GRACE_MS = 2_000;
const APISERVER_STOP_GRACE_MS = 1_500;

export interface OwnedProcesses {
  /** Writes the (empty) list of pids the reaper reads, then starts the reaper. */
  startReaper(): Promise<ChildProcess>;
  /** Spawns a process logging to `<dir>/<name>.log` and lists its pid for the reaper; etcd first, then kube-apiserver. */
  readonly spawn: (name: string, file: string, args: string[], env?: NodeJS.ProcessEnv) => SpawnedProcess;
  /**
   * Stops every process in reverse order (the apiserver's clients together, then kube-apiserver,
   * then etcd), removes `dir`, then the reaper. Idempotent.
   */
  readonly stop: () => Promise<void>;
}

/** The owner of the processes started in `dir`; from now on an exit (and, with stopOnSignals, SIGINT/SIGTERM) kills them. */
export function ownProcesses(dir: string, options: { stopOnSignals: boolean }): OwnedProcesses {
  const pidsFile = join(dir, 'pids');
  /** In start order: etcd, kube-apiserver, then kcm, scheduler and kwok. */
  const children: SpawnedProcess[] = [];
  let reaper: ChildProcess | undefined;

  // Synchronous last-resort cleanup for process exit and signals.
  const killNowSync = (): void => {
    for (const c of children) signalQuietly(c.proc, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    if (reaper) signalQuietly(reaper, 'SIGTERM');
  };
  const onExit = (): void => killNowSync();
  const onSignal = (signal: NodeJS.Signals): void => {
    killNowSync();
    removeProcessHandlers();
    // Keep the default behaviour (terminate) unless someone else handles the signal.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const removeProcessHandlers = (): void => {
    process.off('exit', onExit);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      removeProcessHandlers();
      // The clients of the apiserver first (together: none depends on another), then the
      // apiserver (it would keep retrying a vanished etcd), then etcd.
      const [etcd, apiserver, ...clients] = children;
      await Promise.all(clients.map((c) => terminate(c.proc, c.exited, STOP_GRACE_MS)));
      // Its graceful shutdown usually takes 1-1.5 s, at times longer; the data is thrown away,
      // so it gets no more than that.
      if (apiserver) await terminate(apiserver.proc, apiserver.exited, APISERVER_STOP_GRACE_MS);
      if (etcd) await terminate(etcd.proc, etcd.exited, STOP_GRACE_MS);
      await rm(dir, { recursive: true, force: true });
      // The reaper goes last, so a parent killed in the middle of stop() still gets cleaned up.
      if (reaper) signalQuietly(reaper, 'SIGTERM');
    })());

  process.on('exit', onExit);
  if (options.stopOnSignals) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }

  return {
    async startReaper() {
      await writeFile(pidsFile, '');
      reaper = spawnReaper(dir);
      return reaper;
    },
    spawn: (name, file, args, env) => {
      const child = spawnLogged(file, args, join(dir, `${name}.log`), env);
      children.push(child);
      appendFileSync(pidsFile, `${child.proc.pid}\n`);
      return child;
    },
    stop,
  };
}
