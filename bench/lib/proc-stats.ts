// CPU time and memory of a process (and its children's, once reaped) from /proc: utime + stime
// of /proc/<pid>/stat (all threads), VmRSS and VmHWM (peak RSS) of /proc/<pid>/status.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat; 100 on Linux (USER_HZ). */
const TICKS_PER_SECOND = 100;

export class ProcReadError extends Error {
  override name = 'ProcReadError';
}

/** CPU seconds (user + system) the process has used so far. */
export function cpuSeconds(pid: number): number {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    throw new ProcReadError(`reading /proc/${pid}/stat failed (the process is gone?): ${String(error)}`);
  }
  // The command name (field 2) may hold spaces; the fields after it start at the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / TICKS_PER_SECOND;
}

/** Current and peak resident set size in MiB. */
export function rssMiB(pid: number): { rss: number; peak: number } {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch (error) {
    throw new ProcReadError(`reading /proc/${pid}/status failed (the process is gone?): ${String(error)}`);
  }
  const kib = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 'NaN');
  return { rss: Math.round(kib('VmRSS') / 1024), peak: Math.round(kib('VmHWM') / 1024) };
}

export interface ProcessUsage {
  cpuS: number;
  peakRssMiB: number;
}

/** CPU used since `startCpu` and the peak RSS, summed over the processes. */
export function usageOf(
  pids: readonly number[],
  startCpu: ReadonlyMap<number, number>,
): { total: ProcessUsage; byPid: Record<string, ProcessUsage> } {
  const byPid: Record<string, ProcessUsage> = {};
  let cpu = 0;
  let peak = 0;
  for (const pid of pids) {
    const used = cpuSeconds(pid) - (startCpu.get(pid) ?? 0);
    const { peak: p } = rssMiB(pid);
    byPid[String(pid)] = { cpuS: Math.round(used * 100) / 100, peakRssMiB: p };
    cpu += used;
    peak += p;
  }
  return { total: { cpuS: Math.round(cpu * 100) / 100, peakRssMiB: peak }, byPid };
}

export function cpuSnapshot(pids: readonly number[]): Map<number, number> {
  return new Map(pids.map((pid) => [pid, cpuSeconds(pid)]));
}
