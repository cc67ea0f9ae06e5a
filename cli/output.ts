/**
 * What every verb shares about its answer: exit codes, the errors a verb throws, and
 * plain text tables. A verb throws; cli/main.ts turns the error into ONE line
 * on stderr and an exit code — never a stack trace (cli/error-line.ts). Light: imports
 * nothing, so `convoy --help` does not load the Kubernetes transport.
 *
 * Exit codes (kubectl/flux/argocd style):
 *   0 done / Ready / no diff
 *   1 a failure: the Release failed, `wait` timed out, `diff` found a difference,
 *     the API refused (403), the object is missing, no cluster
 *   2 a usage error (unknown verb or flag, missing argument)
 *   3 `status` only: not Ready yet, still waiting
 *   4 `wait` only: the Release is suspended (spec.suspend: true), so waiting would never end
 */
export const ExitCode = { ok: 0, failure: 1, usage: 2, waiting: 3, suspended: 4 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The command line was wrong: exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The verb ran and the answer is a failure the user must act on: exit 1 with this line. */
export class CliFailure extends Error {
  override name = 'CliFailure';
}

export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export const processOutput: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** Left-aligned columns separated by three spaces, like kubectl's tables. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** `5s`, `3m`, `2h`, `4d` since an RFC 3339 time; `-` when unknown. */
export function age(time: string | undefined, now = Date.now()): string {
  if (time === undefined) return '-';
  const ms = now - Date.parse(time);
  if (Number.isNaN(ms)) return '-';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** The first 12 hex digits of a renderRef, as `git log --oneline` shortens commits. */
export const shortRef = (ref: string | undefined): string =>
  ref === undefined ? '-' : ref.replace(/^sha256:/, '').slice(0, 12);
