/**
 * `convoy get rset [<name>] [-A] [-l selector] [-o json|yaml|name|wide]`: ReleaseSets with where
 * their rollout stands, like `kubectl get`: NAME, STATE, STEP, UPDATED/SELECTED, READY, FAILED,
 * REVISION, AGE (wide adds MESSAGE). -o json|yaml prints the objects as the API server returns them
 * (one object for a named set, a List otherwise), without managedFields unless asked: what every
 * kind's `get` does alike is cli/get-listing.ts.
 */
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { setVerdict } from '../../domain/fleet/set-verdict.ts';
import { verbArgs, type VerbInput } from '../args.ts';
import { getScope, printListed, readScope, type GetFlags, type ListedKind } from '../get-listing.ts';
import { age, ExitCode, table, UsageError } from '../output.ts';
import type { Session } from '../session.ts';
import { releaseSetPath } from '../../adapters/kube/convoy-paths.ts';
import { parseSetOrFail, readSetRaw } from './kube.ts';
import { setKey, setOperands } from './target.ts';

const RELEASE_SETS: ListedKind = {
  kind: 'ReleaseSet',
  resource: 'releaseset.convoy.dev',
  collection: (namespace) => releaseSetPath(namespace),
  readOne: readSetRaw,
};

/** One row: the rollout's state (the verdict's word when the set could not be generated), its step, counts and revision. */
export function setRow(set: ReleaseSet, all: boolean, wide: boolean, now = Date.now()): string[] {
  const s = set.status;
  const verdict = setVerdict(set);
  const rollout = s?.rollout;
  const steps = s?.steps?.length ?? 0;
  const state =
    verdict.kind === 'failure' && rollout?.state !== 'Halted' && rollout?.state !== 'RolledBack'
      ? verdict.word
      : (rollout?.state ?? verdict.word);
  return [
    ...(all ? [set.metadata.namespace ?? ''] : []),
    set.metadata.name,
    state,
    rollout === undefined
      ? '-'
      : `${rollout.stepName} (${rollout.step + 1}/${Math.max(steps, rollout.step + 1)})`,
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
  if (values.watch === true)
    throw new UsageError(
      'get: -w watches Releases; for a ReleaseSet use convoy wait rset/<name> or kubectl get rset -w',
    );
  const scope = getScope(
    RELEASE_SETS,
    values,
    operands?.name === undefined ? undefined : () => setKey('get', positionals, values),
  );
  const cluster = await s.cluster(values);
  const { raws } = await readScope(RELEASE_SETS, cluster, scope, values.selector);
  if (await printListed(s, RELEASE_SETS, raws, scope, values)) return ExitCode.ok;
  const sets = await Promise.all(
    raws.map((raw) =>
      parseSetOrFail(raw, { namespace: raw.metadata?.namespace ?? '?', name: raw.metadata?.name ?? '?' }),
    ),
  );
  const wide = values.output === 'wide';
  const header = [
    ...(scope.all ? ['NAMESPACE'] : []),
    'NAME',
    'STATE',
    'STEP',
    'UPDATED/SELECTED',
    'READY',
    'FAILED',
    'REVISION',
    'AGE',
    ...(wide ? ['MESSAGE'] : []),
  ];
  for (const line of table(
    header,
    sets.map((set) => setRow(set, scope.all, wide)),
  ))
    s.io.out(line);
  return ExitCode.ok;
}
