// `convoy events <release> [-o json]`: what convoy reported about a Release (events.k8s.io/v1), oldest first.
import { parseVerbArgs, releaseKey } from './args.ts';
import { eventTable, releaseEvents } from './event-list.ts';
import { readRaw } from './kube.ts';
import { ExitCode, UsageError } from './output.ts';
import type { Session } from './session.ts';

export async function eventsVerb(argv: readonly string[], s: Session): Promise<ExitCode> {
  const { values, positionals } = parseVerbArgs('events', argv, { output: { type: 'string', short: 'o' } });
  if (values.output !== undefined && values.output !== 'json')
    throw new UsageError(`events: --output must be json, got "${values.output}"`);
  const key = releaseKey('events', positionals, values.namespace);
  const cluster = await s.cluster(values);
  await readRaw(cluster, key); // a missing Release is an error, not an empty list
  const events = await releaseEvents(cluster, key);
  if (values.output === 'json') s.io.out(JSON.stringify(events, null, 2));
  else if (events.length === 0) s.io.err(`No Events for Release ${key.namespace}/${key.name}.`);
  else for (const line of eventTable(events)) s.io.out(line);
  return ExitCode.ok;
}
