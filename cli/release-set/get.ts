/**
 * `convoy get rset [<name>] [-A] [-l selector] [-o json|yaml|name|wide]`: ReleaseSets with where
 * their rollout stands, like `kubectl get`: NAME, STATE, STEP, UPDATED/SELECTED, READY, FAILED,
 * REVISION, AGE (wide adds MESSAGE). -o json|yaml prints the objects as the API server returns them
 * (one object for a named set, a List otherwise), without managedFields unless asked.
 */
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { setVerdict } from '../../domain/fleet/set-verdict.ts';
import { verbArgs, type VerbInput } from '../args.ts';
import { serialize } from '../get.ts';
import { age, ExitCode, table, UsageError } from '../output.ts';
import type { Session } from '../session.ts';
import { parseSetOrFail, readSetRaw, setsPath, type RawSet } from './kube.ts';
import { setKey, setOperands } from './target.ts';

interface GetFlags {
  'all-namespaces': boolean;
  selector: string;
  output: 'json' | 'yaml' | 'wide' | 'name';
  watch: boolean;
  'show-managed-fields': boolean;
}

const KIND = { apiVersion: 'convoy.dev/v1alpha1', kind: 'ReleaseSet' } as const;

function printable(raw: RawSet, managedFields: boolean): RawSet {
  const { metadata, ...rest } = raw;
  const meta = { ...metadata };
  if (!managedFields) delete meta.managedFields;
  return { ...KIND, ...rest, metadata: meta };
}

/** One row: the rollout's state (the verdict's word when the set could not be generated), its step, counts and revision. */
export function setRow(set: ReleaseSet, all: boolean, wide: boolean, now = Date.now()): string[] {
  const s = set.status;
  const verdict = setVerdict(set);
  const rollout = s?.rollout;
  const steps = s?.steps?.length ?? 0;
  const state = verdict.kind === 'failure' && rollout?.state !== 'Halted' && rollout?.state !== 'RolledBack' ? verdict.word : (rollout?.state ?? verdict.word);
  return [
    ...(all ? [set.metadata.namespace ?? ''] : []),
    set.metadata.name,
    state,
    rollout === undefined ? '-' : `${rollout.stepName} (${rollout.step + 1}/${Math.max(steps, rollout.step + 1)})`,
    s?.clusters === undefined ? '-' : `${s.clusters.updated}/${s.clusters.selected}`,
    s?.clusters === undefined ? '-' : String(s.clusters.ready),
    s?.clusters === undefined ? '-' : String(s.clusters.failed),
    s?.revision?.id ?? '-',
    age(set.metadata.creationTimestamp, now),
    ...(wide ? [verdict.message.replace(/\s+/g, ' ')] : []),
  ];
}

export async function getSetVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<GetFlags>(input);
  const operands = setOperands(positionals);
  const all = values['all-namespaces'] === true;
  if (values.watch === true) throw new UsageError('get: -w watches Releases; for a ReleaseSet use convoy wait rset/<name> or kubectl get rset -w');
  const named = operands?.name === undefined ? undefined : setKey('get', positionals, values.namespace);
  if (named !== undefined && all) throw new UsageError('get: -A lists every ReleaseSet; do not name one');
  if (named !== undefined && values.selector !== undefined) throw new UsageError('get: -l selects ReleaseSets by label; do not name one');
  const namespace = named?.namespace ?? (all ? undefined : (values.namespace ?? 'default'));
  const cluster = await s.cluster(values);
  const raws: RawSet[] = named !== undefined ? [await readSetRaw(cluster, named)] : (await cluster.client.list<RawSet>(setsPath(namespace), { labelSelector: values.selector })).items;
  const output = values.output;
  const managed = values['show-managed-fields'] === true;
  if (output === 'json' || output === 'yaml') {
    const value = named !== undefined ? printable(raws[0] ?? {}, managed) : { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: raws.map((r) => printable(r, managed)) };
    s.io.out(await serialize(value, output));
    return ExitCode.ok;
  }
  if (output === 'name') {
    for (const r of raws) s.io.out(`releaseset.convoy.dev/${r.metadata?.name ?? ''}`);
    return ExitCode.ok;
  }
  if (raws.length === 0) {
    s.io.err(all ? 'No ReleaseSets found.' : `No ReleaseSets found in namespace ${namespace ?? 'default'}.`);
    return ExitCode.ok;
  }
  const sets = await Promise.all(raws.map((raw) => parseSetOrFail(raw, { namespace: raw.metadata?.namespace ?? '?', name: raw.metadata?.name ?? '?' })));
  const header = [...(all ? ['NAMESPACE'] : []), 'NAME', 'STATE', 'STEP', 'UPDATED/SELECTED', 'READY', 'FAILED', 'REVISION', 'AGE', ...(output === 'wide' ? ['MESSAGE'] : [])];
  for (const line of table(header, sets.map((set) => setRow(set, all, output === 'wide')))) s.io.out(line);
  return ExitCode.ok;
}
