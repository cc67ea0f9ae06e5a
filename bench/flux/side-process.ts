// A controller process of one side of the Flux bench: spawned with its output in a log file and
// its pid in the control plane's `pids` file, so the control plane's reaper kills it when the
// bench dies (the reaper kills only pids whose command line names the control plane's folder:
// every side process gets a flag or argument under that folder).
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { mapBounded } from '../../domain/runtime/bounded.ts';
import { spawnLogged, terminate, type SpawnedProcess } from '../../dev/control-plane/processes.ts';

export interface SideProcess {
  readonly name: string;
  readonly pid: number;
  readonly log: string;
  /** True once it exited (for whatever reason). */
  exited(): boolean;
  /** SIGTERM, SIGKILL after `graceMs`; resolves once it is gone. */
  stop(graceMs?: number): Promise<void>;
}

export class SideProcessError extends Error {
  override name = 'SideProcessError';
}

export function startSideProcess(o: {
  name: string;
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  log: string;
  pidsFile: string;
}): SideProcess {
  const spawned: SpawnedProcess = spawnLogged(o.file, o.args, o.log, o.env);
  const pid = spawned.proc.pid ?? -1;
  appendFileSync(o.pidsFile, `${pid}\n`);
  let gone = false;
  void spawned.exited.then(() => (gone = true));
  return {
    name: o.name,
    pid,
    log: o.log,
    exited: () => gone,
    stop: (graceMs = 5_000) => terminate(spawned.proc, spawned.exited, graceMs),
  };
}

/** Polls `check` every 200 ms until it returns true; fails when a process exits first or after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  processes: readonly SideProcess[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = processes.find((p) => p.exited());
    if (dead) throw new SideProcessError(`${dead.name} exited before ${what}; its log is ${dead.log}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline)
      throw new SideProcessError(
        `${what} did not happen within ${timeoutMs} ms (logs: ${processes.map((p) => p.log).join(', ')})`,
      );
    await sleep(200);
  }
}

/** Runs `work` over `items` with at most `concurrency` at a time (domain/runtime/bounded.ts). */
export async function inPool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  await mapBounded(items, concurrency, work);
}
