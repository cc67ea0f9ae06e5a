/**
 * `convoy describe rset/<name>`: everything about one ReleaseSet, like `kubectl describe`: the
 * verdict, revision, rollout, steps with their counts and state, per-condition counts of the
 * children, failing Clusters with reasons, held children, every child with its verdict, Events.
 */
import { isKubeApiError } from '../../adapters/kube/http.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { ReleaseSet, Revision } from '../../domain/api/release-set.ts';
import { FleetAnnotation, FleetLabel } from '../../domain/fleet/labels.ts';
import { setVerdict } from '../../domain/fleet/set-verdict.ts';
import { combinedVerdict } from '../../domain/status/verdict.ts';
import { verbArgs, type VerbInput } from '../args.ts';
import { objectEvents } from '../../views/events.ts';
import { eventTable } from '../event-table.ts';
import { age, ExitCode, table } from '../output.ts';
import type { Session } from '../session.ts';
import { verdictWord } from '../verdict-line.ts';
import { readSet, setChildren } from './kube.ts';
import { setKey } from './target.ts';

const indent = (lines: readonly string[]): string[] => lines.map((l) => `  ${l}`);
const oneLine = (text: string): string => text.replace(/\s+/g, ' ');

export function revisionText(r: Revision | undefined): string {
  if (r === undefined) return '-';
  const src =
    r.source.git !== undefined
      ? `git ${r.source.git.url}@${r.source.git.commit.slice(0, 12)}`
      : r.source.helm !== undefined
        ? `helm ${r.source.helm.chart} ${r.source.helm.version}`
        : '';
  return `${r.id}${src === '' ? '' : ` (${src})`}`;
}

/** What a person can do about the set now: approve the waiting step, resume, roll back. */
function hints(set: ReleaseSet): string[] {
  const s = set.status;
  const ref = `rset/${set.metadata.name} -n ${set.metadata.namespace ?? 'default'}`;
  const out: string[] = [];
  if (s?.rollout?.state === 'WaitingForApproval')
    out.push(`Approve:     convoy approve ${ref} --step ${s.rollout.stepName}`);
  if (set.spec.rollout.paused) out.push(`Resume:      convoy resume ${ref}`);
  const last = s?.lastSucceededRevision;
  if (
    last !== undefined &&
    s?.revision !== undefined &&
    last.id !== s.revision.id &&
    s.rollout?.state !== 'RolledBack'
  )
    out.push(`Roll back:   convoy rollback ${ref} (to ${last.id})`);
  return out;
}

export function describeSet(
  set: ReleaseSet,
  children: readonly Release[],
  unparsed: readonly string[],
  events: readonly string[],
): string[] {
  const s = set.status;
  const verdict = setVerdict(set);
  const rollout = s?.rollout;
  const counts = s?.clusters;
  const out: string[] = [
    `Name:        ${set.metadata.name}`,
    `Namespace:   ${set.metadata.namespace ?? 'default'}`,
    `Generation:  ${set.metadata.generation ?? '-'} (observed ${s?.observedGeneration ?? '-'})`,
    `Verdict:     ${verdict.word}: ${oneLine(verdict.message)}`,
    `Revision:    ${revisionText(s?.revision)}`,
    `Last succeeded: ${revisionText(s?.lastSucceededRevision)}`,
    `Rollout:     ${rollout === undefined ? '-' : `${rollout.state} at step ${rollout.stepName} (${rollout.step + 1}/${s?.steps?.length ?? '?'})${rollout.stepStartedAt ? `, started ${rollout.stepStartedAt}` : ''}${rollout.healthySince ? `, healthy since ${rollout.healthySince}` : ''}`}`,
    `Paused:      ${set.spec.rollout.paused ? 'true' : 'false'}`,
    `Clusters:    ${counts === undefined ? '-' : `${counts.selected} selected, ${counts.updated} updated, ${counts.ready} ready, ${counts.failed} failed, ${counts.waiting} waiting`}`,
    ...hints(set),
    'Conditions:',
    ...indent(
      table(
        ['TYPE', 'STATUS', 'REASON', 'AGE', 'MESSAGE'],
        (s?.conditions ?? []).map((c) => [
          c.type,
          c.status,
          c.reason,
          age(c.lastTransitionTime),
          oneLine(c.message),
        ]),
      ),
    ),
    'Steps:',
    ...indent(
      table(
        ['NAME', 'CLUSTERS', 'UPDATED', 'READY', 'FAILED', 'STATE', 'FINISHED'],
        (s?.steps ?? []).map((st) => [
          st.name,
          String(st.clusters),
          String(st.updated),
          String(st.ready),
          String(st.failed),
          st.state,
          st.finishedAt ?? '-',
        ]),
      ),
    ),
  ];
  const rc = s?.releaseConditions;
  if (rc !== undefined) {
    out.push(
      'Release conditions:',
      ...indent(
        table(
          ['CONDITION', 'TRUE', 'FALSE', 'UNKNOWN'],
          Object.entries(rc).map(([type, n]) => [type, String(n.True), String(n.False), String(n.Unknown)]),
        ),
      ),
    );
  }
  const failing = s?.failing ?? [];
  out.push(`Failing clusters:${failing.length === 0 ? ' <none>' : ''}`);
  if (failing.length > 0) {
    out.push(
      ...indent(
        table(
          ['CLUSTER', 'RELEASE', 'SIGNAL', 'REASON', 'SINCE', 'MESSAGE'],
          failing.map((f) => [f.cluster, f.release, f.signal, f.reason, f.since ?? '-', oneLine(f.message)]),
        ),
      ),
    );
    if ((s?.failingOmitted ?? 0) > 0) out.push(`  …and ${s?.failingOmitted} more`);
  }
  const held = s?.held ?? [];
  out.push(`Held:${held.length === 0 ? ' <none>' : ''}`);
  if (held.length > 0) {
    out.push(
      ...indent(
        table(
          ['CLUSTER', 'RELEASE', 'REASON'],
          held.map((h) => [h.cluster, h.release, h.reason]),
        ),
      ),
    );
    if ((s?.heldOmitted ?? 0) > 0) out.push(`  …and ${s?.heldOmitted} more`);
  }
  out.push(`Children:${children.length === 0 ? ' <none>' : ''}`);
  if (children.length > 0) {
    out.push(
      ...indent(
        table(
          ['RELEASE', 'CLUSTER', 'REVISION', 'VERDICT'],
          children.map((r) => [
            r.metadata.name,
            r.metadata.labels?.[FleetLabel.cluster] ?? r.spec.cluster.name,
            r.metadata.annotations?.[FleetAnnotation.revision] ?? '-',
            verdictWord(combinedVerdict(r)),
          ]),
        ),
      ),
    );
  }
  if (unparsed.length > 0) out.push(`  (not shown, they do not parse as Releases: ${unparsed.join(', ')})`);
  out.push('Events:', ...(events.length === 0 ? ['  <none>'] : indent(events)));
  return out;
}

/** The value, or a note when the API server refused the user (403). */
async function orForbidden<T>(read: Promise<T>, what: string): Promise<T | string> {
  try {
    return await read;
  } catch (error) {
    if (isKubeApiError(error, 403)) return `forbidden: you ${what}`;
    throw error;
  }
}

export async function describeSetVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs(input);
  const key = setKey('describe', positionals, values);
  const cluster = await s.cluster(values);
  const set = await readSet(cluster, key);
  // A user who may read the set but not list Releases or Events there still gets the set; the section says why it is empty.
  const [childList, events] = await Promise.all([
    orForbidden(setChildren(cluster, key), `may not list releases.convoy.dev in namespace ${key.namespace}`),
    orForbidden(
      objectEvents(cluster, key, 'ReleaseSet'),
      `may not list events.events.k8s.io in namespace ${key.namespace}`,
    ),
  ]);
  const children = typeof childList === 'string' ? { children: [], unparsed: [] } : childList;
  const eventLines = typeof events === 'string' ? [events] : events.length === 0 ? [] : eventTable(events);
  const lines = describeSet(set, children.children, children.unparsed, eventLines);
  for (const line of typeof childList === 'string'
    ? lines.map((l) => (l === 'Children: <none>' ? `Children:    (${childList})` : l))
    : lines)
    s.io.out(line);
  return ExitCode.ok;
}

/** `convoy events rset/<name> [-o json|yaml]`: the Events about the set (its step transitions), oldest first. */
export async function setEventsVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ output: 'json' | 'yaml' }>(input);
  const key = setKey('events', positionals, values);
  const cluster = await s.cluster(values);
  await readSet(cluster, key); // a missing set is an error, not an empty list
  const events = await objectEvents(cluster, key, 'ReleaseSet');
  if (values.output === 'json') s.io.out(JSON.stringify(events, null, 2));
  else if (values.output === 'yaml') s.io.out((await import('yaml')).stringify(events).replace(/\n$/, ''));
  else if (events.length === 0) s.io.err(`No Events for ReleaseSet ${key.namespace}/${key.name}.`);
  else for (const line of eventTable(events)) s.io.out(line);
  return ExitCode.ok;
}
