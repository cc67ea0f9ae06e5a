// `convoy status <release>`: the combined verdict in one line (or -o json|yaml).
import { combinedVerdict } from '../domain/status/verdict.ts';
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import { readRelease } from './kube.ts';
import { ExitCode } from './output.ts';
import type { Session } from './session.ts';
import { verdictLine } from './verdict-line.ts';

export async function statusVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ output: 'json' | 'yaml' }>(input);
  const key = releaseKey('status', positionals, values);
  const verdict = combinedVerdict(await readRelease(await s.cluster(values), key));
  if (values.output === 'yaml') s.io.out((await import('yaml')).stringify(verdict).replace(/\n$/, ''));
  else s.io.out(values.output === 'json' ? JSON.stringify(verdict) : verdictLine(verdict));
  return verdict.ready ? ExitCode.ok : verdict.kind === 'failure' ? ExitCode.failure : ExitCode.waiting;
}
