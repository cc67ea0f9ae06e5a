// `convoy events <release> [-o json|yaml]`: what convoy reported about a Release (events.k8s.io/v1), oldest first.
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import { releaseEvents } from '../views/events.ts';
import { eventTable } from './event-table.ts';
import { readRaw } from './kube.ts';
import { ExitCode } from './output.ts';
import type { Session } from './session.ts';

export async function eventsVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ output: 'json' | 'yaml' }>(input);
  const key = releaseKey('events', positionals, values);
  const cluster = await s.cluster(values);
  await readRaw(cluster, key); // a missing Release is an error, not an empty list
  const events = await releaseEvents(cluster, key);
  if (values.output === 'json') s.io.out(JSON.stringify(events, null, 2));
  else if (values.output === 'yaml') s.io.out((await import('yaml')).stringify(events).replace(/\n$/, ''));
  else if (events.length === 0) s.io.err(`No Events for Release ${key.namespace}/${key.name}.`);
  else for (const line of eventTable(events)) s.io.out(line);
  return ExitCode.ok;
}
