// `convoy status <release>`: the combined verdict in one line (or --output json).
import { combinedVerdict } from '../domain/status/verdict.ts';
import { parseVerbArgs, releaseKey } from './args.ts';
import { readRelease } from './kube.ts';
import { ExitCode, UsageError } from './output.ts';
import type { Session } from './session.ts';
import { verdictLine } from './verdict-line.ts';

export async function statusVerb(argv: readonly string[], s: Session): Promise<ExitCode> {
  const { values, positionals } = parseVerbArgs('status', argv, { output: { type: 'string', short: 'o' } });
  if (values.output !== undefined && values.output !== 'json')
    throw new UsageError(`status: --output must be json, got "${values.output}"`);
  const key = releaseKey('status', positionals, values.namespace);
  const verdict = combinedVerdict(await readRelease(await s.cluster(values), key));
  s.io.out(values.output === 'json' ? JSON.stringify(verdict) : verdictLine(verdict));
  return verdict.ready ? ExitCode.ok : verdict.kind === 'failure' ? ExitCode.failure : ExitCode.waiting;
}
