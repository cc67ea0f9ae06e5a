/**
 * `convoy wait <release> [--timeout 5m]`: polls the combined verdict until it
 * is Ready (exit 0) or a failure convoy does not retry (exit 1 at once). A
 * retried stop (SourceNotReady, ClusterNotReady, …) is a wait: it may recover.
 * A suspended Release (spec.suspend: true) changes only when someone resumes
 * it, so waiting for it would only ever end at the timeout: exit 4 at once with
 * one line saying so and how to resume (as `flux reconcile` refuses a suspended
 * object instead of waiting). At the timeout: exit 1 and the last verdict. A
 * change of verdict is printed as it happens; an API server that cannot be
 * reached for a moment is waited through, a refusal (403) or a missing Release
 * is not.
 */
import { KubeTransportError } from '../adapters/kube/http.ts';
import { parseDuration } from '../domain/runtime/duration.ts';
import { combinedVerdict, type Verdict } from '../domain/status/verdict.ts';
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import { readRelease } from './kube.ts';
import { CliFailure, ExitCode, UsageError } from './output.ts';
import type { Session } from './session.ts';
import { verdictLine } from './verdict-line.ts';

/** The one line of a suspended Release: why the wait ends, and how to resume it (convoy or kubectl). */
const suspendedLine = ({ namespace, name }: { namespace: string; name: string }): string =>
  `${namespace}/${name} is suspended (spec.suspend: true): convoy applies nothing until it is resumed, so waiting would never end; ` +
  `resume it with \`convoy resume ${name} -n ${namespace}\` ` +
  `(or kubectl patch releases.convoy.dev ${name} -n ${namespace} --type merge -p '{"spec":{"suspend":false}}') and wait again`;

function durationFlag(name: string, value: string): number {
  const parsed = parseDuration(value);
  if (!parsed.ok) throw new UsageError(`wait: --${name}: ${parsed.error}`);
  return parsed.ms;
}

export async function waitVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ timeout: string; interval: string }>(input);
  const timeout = values.timeout ?? '5m';
  const timeoutMs = durationFlag('timeout', timeout);
  const intervalMs = Math.max(100, durationFlag('interval', values.interval ?? '1s'));
  const key = releaseKey('wait', positionals, values.namespace);
  const cluster = await s.cluster(values);
  const deadline = Date.now() + timeoutMs;
  let last: Verdict | undefined;
  let printed = '';
  for (;;) {
    try {
      last = combinedVerdict(await readRelease(cluster, key));
    } catch (error) {
      if (!(error instanceof KubeTransportError) || Date.now() > deadline) throw error;
    }
    if (last !== undefined) {
      const line = verdictLine(last);
      if (last.ready) {
        s.io.out(line);
        return ExitCode.ok;
      }
      if (last.kind === 'failure') throw new CliFailure(line);
      if (last.kind === 'suspended') {
        s.io.err(`convoy: ${suspendedLine(key)}`);
        return ExitCode.suspended;
      }
      if (line !== printed) s.io.err(line);
      printed = line;
    }
    if (Date.now() > deadline) {
      throw new CliFailure(
        `timed out after ${timeout} waiting for ${key.namespace}/${key.name}; last verdict: ${last === undefined ? 'none' : verdictLine(last)}`,
      );
    }
    await s.sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now()) + 10));
  }
}
