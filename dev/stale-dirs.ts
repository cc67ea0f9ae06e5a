// Temp folders of `convoy dev` (and of the runtime and control plane it starts) carry the pid of
// the process that made them: `<prefix><pid>-<random>`. A run killed with -9 leaves them behind;
// the next start removes those whose process is gone.
import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Prefixes of the per-process temp folders (each followed by `<pid>-`). */
export const DEV_TEMP_PREFIXES = [
  'convoy-cp-',
  'convoy-dev-cache-',
  'convoy-examples-',
  'convoy-lambda-',
  'convoy-oci-',
] as const;

/** `<prefix><pid>-`, for mkdtemp. */
export function ownedTempPrefix(prefix: (typeof DEV_TEMP_PREFIXES)[number]): string {
  return `${prefix}${process.pid}-`;
}

/**
 * Removes the folders under `root` (default the OS temp dir) named `<prefix><pid>-…` whose pid no
 * longer runs. Returns the removed paths. Folders of running processes, and names without a pid,
 * are left alone.
 */
export async function removeStaleDirs(root = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const prefix = DEV_TEMP_PREFIXES.find((p) => entry.name.startsWith(p));
    if (prefix === undefined) continue;
    const pid = /^(\d+)-/.exec(entry.name.slice(prefix.length))?.[1];
    if (pid === undefined || isRunning(Number(pid))) continue;
    const path = join(root, entry.name);
    await rm(path, { recursive: true, force: true });
    removed.push(path);
  }
  return removed;
}

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
