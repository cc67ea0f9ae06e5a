/**
 * Test doubles around the real render binaries: a wrapper that counts how often a tool was
 * started (so a test can prove a refusal came before helm ran), and a fake that records the
 * environment and working directory it was given.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A wrapper script for `binary` that appends a line to a log before running it. */
export async function countingTool(
  dir: string,
  binary: string,
): Promise<{ path: string; starts(): Promise<number> }> {
  const log = join(dir, 'starts.log');
  const path = join(dir, 'counting-tool');
  await writeFile(log, '');
  // No PATH in the tool's environment: only builtins and absolute paths.
  await writeFile(path, `#!/bin/sh\necho started >> '${log}'\nexec '${binary}' "$@"\n`);
  await chmod(path, 0o755);
  return {
    path,
    starts: async () => (await readFile(log, 'utf8')).split('\n').filter(Boolean).length,
  };
}

/** A fake tool that writes `env` and `pwd` to a file and prints one ConfigMap. */
export async function recordingTool(
  dir: string,
): Promise<{ path: string; seen(): Promise<{ env: Record<string, string>; cwd: string }> }> {
  const out = join(dir, 'seen.txt');
  const path = join(dir, 'recording-tool');
  await writeFile(
    path,
    `#!/bin/sh\n{ pwd; /usr/bin/env; } > '${out}'\necho 'apiVersion: v1'\necho 'kind: ConfigMap'\necho 'metadata: {name: seen}'\n`,
  );
  await chmod(path, 0o755);
  return {
    path,
    async seen() {
      const [cwd = '', ...lines] = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
      const env: Record<string, string> = {};
      for (const line of lines) {
        const eq = line.indexOf('=');
        if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
      }
      return { env, cwd };
    },
  };
}
