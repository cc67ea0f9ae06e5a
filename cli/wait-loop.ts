/**
 * What `convoy wait` does for every kind it waits on (a Release, a ReleaseSet): read the object
 * every --interval until its verdict settles or --timeout passes.
 *   ready     the answer is printed on stdout: exit 0
 *   failure   a stop convoy does not retry: exit 1 at once with its line
 *   held      nothing moves until a person acts (suspended, paused, waiting for approval), so
 *             waiting would only end at the timeout: exit 4 at once, the line saying how to move it
 *   waiting   each change of the line is printed on stderr
 * An API server that cannot be reached for a moment is waited through; a refusal (403) or a
 * missing object is not. At the timeout: exit 1 naming the object and its last verdict.
 */
import { KubeTransportError } from '../adapters/kube/http.ts';
import { parseDuration } from '../domain/runtime/duration.ts';
import type { Cluster } from '../views/cluster.ts';
import { verbArgs, type VerbInput } from './args.ts';
import { CliFailure, ExitCode, UsageError } from './output.ts';
import type { Session } from './session.ts';

/** What one read of the object means for the wait, and the line that says so. */
export interface WaitStep {
  readonly state: 'ready' | 'failure' | 'held' | 'waiting';
  readonly line: string;
}

export interface WaitTarget {
  /** How the timeout line names the object, e.g. `ns/web` or `ReleaseSet ns/web`. */
  readonly what: string;
  /** Reads the object once and judges it. */
  readonly read: (cluster: Cluster) => Promise<WaitStep>;
}

function durationFlag(name: string, value: string): number {
  const parsed = parseDuration(value);
  if (!parsed.ok) throw new UsageError(`wait: --${name}: ${parsed.error}`);
  return parsed.ms;
}

/**
 * Runs `wait` on the object `target` names from the operands and -n: the flags and operands are
 * checked before it connects; then it polls until the verdict settles (see the top of this file).
 */
export async function waitVerbFor(
  input: VerbInput,
  s: Session,
  target: (positionals: readonly string[], namespaceFlag: string | undefined) => WaitTarget,
): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ timeout: string; interval: string }>(input);
  const timeout = values.timeout ?? '5m';
  const timeoutMs = durationFlag('timeout', timeout);
  const intervalMs = Math.max(100, durationFlag('interval', values.interval ?? '1s'));
  const { what, read } = target(positionals, values.namespace);
  const cluster = await s.cluster(values);
  const deadline = Date.now() + timeoutMs;
  let last: WaitStep | undefined;
  let printed = '';
  for (;;) {
    let step: WaitStep | undefined;
    try {
      step = await read(cluster);
    } catch (error) {
      if (!(error instanceof KubeTransportError) || Date.now() > deadline) throw error;
    }
    if (step !== undefined) {
      last = step;
      if (step.state === 'ready') {
        s.io.out(step.line);
        return ExitCode.ok;
      }
      if (step.state === 'failure') throw new CliFailure(step.line);
      if (step.state === 'held') {
        s.io.err(`convoy: ${step.line}`);
        return ExitCode.suspended;
      }
      if (step.line !== printed) s.io.err(step.line);
      printed = step.line;
    }
    if (Date.now() > deadline)
      throw new CliFailure(
        `timed out after ${timeout} waiting for ${what}; last verdict: ${last === undefined ? 'none' : last.line}`,
      );
    await s.sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now()) + 10));
  }
}
