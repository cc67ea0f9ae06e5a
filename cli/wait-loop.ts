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
 * Several objects (names, or -l): each is read until it settles; exit 0 once all are Ready, and the
 * first failure or held object ends the wait, named.
 */
import { KubeTransportError } from '../adapters/kube/http.ts';
import { parseDuration } from '../domain/runtime/duration.ts';
import type { Cluster } from '../views/cluster.ts';
import { verbArgs, type GlobalFlags, type VerbInput } from './args.ts';
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
 * Runs `wait` on the objects `plan` names from the operands and flags: the flags and operands are
 * checked before it connects (the plan's outer call); then its inner call finds the objects (a
 * label selector lists them) and this polls until every verdict settles (see the top of this file).
 * Several objects: exit 0 when all are Ready, 1 at the first failure (named), 4 at the first held one.
 */
export async function waitVerbFor(
  input: VerbInput,
  s: Session,
  plan: (
    positionals: readonly string[],
    values: GlobalFlags & { selector?: string | undefined; 'all-namespaces'?: boolean | undefined },
  ) => (cluster: Cluster) => Promise<readonly WaitTarget[]>,
): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{
    timeout: string;
    interval: string;
    selector: string;
    'all-namespaces': boolean;
  }>(input);
  const timeout = values.timeout ?? '5m';
  const timeoutMs = durationFlag('timeout', timeout);
  const intervalMs = Math.max(100, durationFlag('interval', values.interval ?? '1s'));
  const find = plan(positionals, values);
  const cluster = await s.cluster(values);
  const targets = await find(cluster);
  const several = targets.length > 1;
  const named = (t: WaitTarget, line: string) => (several ? `${t.what}: ${line}` : line);
  const deadline = Date.now() + timeoutMs;
  const last = new Map<WaitTarget, WaitStep>();
  const printed = new Map<WaitTarget, string>();
  let pending = [...targets];
  for (;;) {
    for (const target of pending) {
      let step: WaitStep | undefined;
      try {
        step = await target.read(cluster);
      } catch (error) {
        if (!(error instanceof KubeTransportError) || Date.now() > deadline) throw error;
      }
      if (step === undefined) continue;
      last.set(target, step);
      if (step.state === 'ready') s.io.out(named(target, step.line));
      if (step.state === 'failure') throw new CliFailure(named(target, step.line));
      if (step.state === 'held') {
        s.io.err(`convoy: ${step.line}`);
        return ExitCode.suspended;
      }
      if (step.state === 'waiting' && step.line !== printed.get(target)) s.io.err(named(target, step.line));
      printed.set(target, step.line);
    }
    pending = pending.filter((t) => last.get(t)?.state !== 'ready');
    if (pending.length === 0) return ExitCode.ok;
    if (Date.now() > deadline) throw new CliFailure(timeoutLine(timeout, targets, pending, last));
    await s.sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now()) + 10));
  }
}

function timeoutLine(
  timeout: string,
  targets: readonly WaitTarget[],
  pending: readonly WaitTarget[],
  last: ReadonlyMap<WaitTarget, WaitStep>,
): string {
  const verdict = (t: WaitTarget) => last.get(t)?.line ?? 'none';
  const [only] = pending;
  if (targets.length === 1 && only !== undefined)
    return `timed out after ${timeout} waiting for ${only.what}; last verdict: ${verdict(only)}`;
  return `timed out after ${timeout} waiting for ${pending.length} of ${targets.length} (${pending.map((t) => t.what).join(', ')}); last verdicts: ${pending.map((t) => `${t.what}: ${verdict(t)}`).join('; ')}`;
}
