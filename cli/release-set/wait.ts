/**
 * `convoy wait rset/<name> [--timeout 5m]`: polls the set's verdict (domain/fleet/set-verdict.ts)
 * with the exit codes of `convoy wait` for a Release:
 *   0  the rollout Succeeded for the current generation
 *   1  Halted, RolledBack, a Generated stop the set does not retry (at once), or the timeout
 *   4  Paused or WaitingForApproval (at once): nothing moves until a person acts, so waiting
 *      would only end at the timeout; the line says how (convoy resume / convoy approve), as for a
 *      suspended Release
 * A batch in flight, a soak, a retried stop are waited through; each change is printed on stderr.
 */
import { KubeTransportError } from '../../adapters/kube/http.ts';
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { setVerdict, type SetVerdict } from '../../domain/fleet/set-verdict.ts';
import { parseDuration } from '../../domain/runtime/duration.ts';
import type { ReleaseKey } from '../../views/cluster.ts';
import { verbArgs, type VerbInput } from '../args.ts';
import { CliFailure, ExitCode, UsageError } from '../output.ts';
import type { Session } from '../session.ts';
import { readSet } from './kube.ts';
import { setKey } from './target.ts';

const line = (v: SetVerdict): string => `${v.word}: ${v.message.replace(/\s+/g, ' ')}`;

/** Why a held set will not move by itself, and the command that moves it. */
export function heldLine(key: ReleaseKey, set: ReleaseSet, v: SetVerdict): string {
  const ref = `rset/${key.name} -n ${key.namespace}`;
  if (v.word === 'Paused')
    return `${key.namespace}/${key.name} is paused (spec.rollout.paused: true): nothing is written until it is resumed, so waiting would never end; resume it with \`convoy resume ${ref}\` and wait again`;
  const step = set.status?.rollout?.stepName ?? '?';
  return `${key.namespace}/${key.name} waits for approval of step ${step} (revision ${set.status?.revision?.id ?? '?'}): approve it with \`convoy approve ${ref} --step ${step}\` and wait again`;
}

function durationFlag(name: string, value: string): number {
  const parsed = parseDuration(value);
  if (!parsed.ok) throw new UsageError(`wait: --${name}: ${parsed.error}`);
  return parsed.ms;
}

export async function waitSetVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ timeout: string; interval: string }>(input);
  const timeout = values.timeout ?? '5m';
  const timeoutMs = durationFlag('timeout', timeout);
  const intervalMs = Math.max(100, durationFlag('interval', values.interval ?? '1s'));
  const key = setKey('wait', positionals, values.namespace);
  const cluster = await s.cluster(values);
  const deadline = Date.now() + timeoutMs;
  let last: SetVerdict | undefined;
  let printed = '';
  for (;;) {
    let set: ReleaseSet | undefined;
    try {
      set = await readSet(cluster, key);
    } catch (error) {
      if (!(error instanceof KubeTransportError) || Date.now() > deadline) throw error;
    }
    if (set !== undefined) {
      last = setVerdict(set);
      if (last.kind === 'ready') {
        s.io.out(line(last));
        return ExitCode.ok;
      }
      if (last.kind === 'failure') throw new CliFailure(`${key.namespace}/${key.name}: ${line(last)}`);
      if (last.kind === 'held') {
        s.io.err(`convoy: ${heldLine(key, set, last)}`);
        return ExitCode.suspended;
      }
      const text = line(last);
      if (text !== printed) s.io.err(text);
      printed = text;
    }
    if (Date.now() > deadline)
      throw new CliFailure(`timed out after ${timeout} waiting for ReleaseSet ${key.namespace}/${key.name}; last verdict: ${last === undefined ? 'none' : line(last)}`);
    await s.sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now()) + 10));
  }
}
