/**
 * `convoy wait rset/<name> [--timeout 5m]`: polls the set's verdict (domain/fleet/set-verdict.ts)
 * with the exit codes of `convoy wait` for a Release:
 *   0  the rollout Succeeded for the current generation
 *   1  Halted, RolledBack, a Generated stop the set does not retry (at once), or the timeout
 *   4  Paused or WaitingForApproval (at once): nothing moves until a person acts, so waiting
 *      would only end at the timeout; the line says how (convoy resume / convoy approve), as for a
 *      suspended Release
 * A batch in flight, a soak, a retried stop are waited through; each change is printed on stderr.
 * The polling is cli/wait-loop.ts, shared with `wait <release>`.
 */
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { FleetAnnotation } from '../../domain/fleet/labels.ts';
import { setVerdict, type SetVerdict } from '../../domain/fleet/set-verdict.ts';
import type { ReleaseKey } from '../../views/cluster.ts';
import type { VerbInput } from '../args.ts';
import type { ExitCode } from '../output.ts';
import type { Session } from '../session.ts';
import { UsageError } from '../output.ts';
import { waitVerbFor, type WaitTarget } from '../wait-loop.ts';
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

/**
 * The step whose approval is written but not yet taken: the rollout still waits for approval of
 * that step of that revision and the annotation approves exactly it (what `convoy approve` writes).
 * The set's status moves on once the controller reads it, so `approve && wait` waits for that
 * instead of ending at once on the WaitingForApproval the status still shows.
 */
export function approvalNotYetTaken(set: ReleaseSet): string | undefined {
  const s = set.status;
  if (s?.rollout?.state !== 'WaitingForApproval' || s.revision === undefined) return undefined;
  const written = set.metadata.annotations?.[FleetAnnotation.approve];
  return written === `${s.rollout.stepName}@${s.revision.id}` ? s.rollout.stepName : undefined;
}

export function waitSetVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  return waitVerbFor(input, s, (positionals, values) => {
    if (values.selector !== undefined || values['all-namespaces'] === true)
      throw new UsageError('wait: -l and -A select Releases; wait for one ReleaseSet as rset/<name>');
    const key = setKey('wait', positionals, values);
    return () => Promise.resolve([target(key)]);
  });
}

function target(key: ReleaseKey): WaitTarget {
  return {
    what: `ReleaseSet ${key.namespace}/${key.name}`,
    async read(cluster) {
      const set = await readSet(cluster, key);
      const verdict = setVerdict(set);
      if (verdict.kind === 'ready') return { state: 'ready', line: line(verdict) };
      if (verdict.kind === 'failure')
        return { state: 'failure', line: `${key.namespace}/${key.name}: ${line(verdict)}` };
      if (verdict.kind === 'held') {
        const approval = approvalNotYetTaken(set);
        if (approval !== undefined)
          return {
            state: 'waiting',
            line: `step ${approval} approved (${FleetAnnotation.approve}); waiting for the ReleaseSet to take the approval`,
          };
        return { state: 'held', line: heldLine(key, set, verdict) };
      }
      return { state: 'waiting', line: line(verdict) };
    },
  };
}
