/**
 * `convoy approve rset/<name> [--step <step>]`, `convoy pause|resume rset/<name>`, `convoy rollback
 * rset/<name>`: small merge patches on the ReleaseSet with the user's own identity (their RBAC
 * decides: `patch` on releasesets.convoy.dev). approve and rollback write an annotation that names
 * the revision (docs/fleet.md), so neither carries over to a later revision; both refuse when there
 * is nothing to act on, before writing anything.
 */
import { FleetAnnotation } from '../../domain/fleet/labels.ts';
import { approvalFor, rollbackFor } from '../../domain/fleet/operator-requests.ts';
import type { ReleaseKey } from '../../views/cluster.ts';
import { verbArgs, type VerbInput } from '../args.ts';
import { CliFailure, ExitCode, UsageError } from '../output.ts';
import type { Session } from '../session.ts';
import { patchSet, readSet } from './kube.ts';
import { setKey } from './target.ts';

export async function approveSetVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ step: string }>(input);
  const key = setKey('approve', positionals, values);
  const cluster = await s.cluster(values);
  const approval = approvalFor(await readSet(cluster, key), values.step);
  if (!approval.ok)
    throw new CliFailure(
      `${approval.message}${values.step === undefined ? '' : ' (convoy describe rset/<name> shows the rollout)'}`,
    );
  await patchSet(cluster, key, { metadata: { annotations: { [FleetAnnotation.approve]: approval.value } } });
  s.io.out(
    `${key.namespace}/${key.name}: step ${approval.step} approved (${FleetAnnotation.approve}=${approval.value})`,
  );
  return ExitCode.ok;
}

async function setPaused(verb: 'pause' | 'resume', input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs(input);
  const key: ReleaseKey = setKey(verb, positionals, values);
  await patchSet(await s.cluster(values), key, { spec: { rollout: { paused: verb === 'pause' } } });
  s.io.out(
    verb === 'pause'
      ? `${key.namespace}/${key.name} paused: no child Release is written or deleted until convoy resume rset/${key.name}`
      : `${key.namespace}/${key.name} resumed: the rollout goes on (the current step's clock restarts)`,
  );
  return ExitCode.ok;
}

export const pauseSetVerb = (input: VerbInput, s: Session) => setPaused('pause', input, s);
export const resumeSetVerb = (input: VerbInput, s: Session) => setPaused('resume', input, s);

export async function rollbackSetVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ to: string; 'last-healthy': boolean; api: string }>(input);
  if (values.to !== undefined || values['last-healthy'] === true)
    throw new UsageError(
      'rollback: --to and --last-healthy pick a render of a Release; a ReleaseSet rolls back to status.lastSucceededRevision',
    );
  const key = setKey('rollback', positionals, values);
  const cluster = await s.cluster(values);
  const rollback = rollbackFor(await readSet(cluster, key));
  if (!rollback.ok) throw new CliFailure(rollback.message);
  await patchSet(cluster, key, { metadata: { annotations: { [FleetAnnotation.rollback]: rollback.value } } });
  s.io.out(
    `${key.namespace}/${key.name}: rollback of revision ${rollback.value} to ${rollback.to} requested (${FleetAnnotation.rollback}=${rollback.value}); convoy describe rset/${key.name} -n ${key.namespace} shows it`,
  );
  return ExitCode.ok;
}

/** `convoy pause <release>`: pause is for ReleaseSets; a Release is suspended. */
export function pauseReleaseVerb(): Promise<ExitCode> {
  return Promise.reject(
    new UsageError(
      'pause: pauses a ReleaseSet (convoy pause rset/<name>); a Release is suspended with convoy suspend <release>',
    ),
  );
}

/** `convoy approve <release>`: only ReleaseSet steps are approved. */
export function approveReleaseVerb(): Promise<ExitCode> {
  return Promise.reject(
    new UsageError(
      'approve: approves the waiting step of a ReleaseSet (convoy approve rset/<name> [--step <step>]); a Release has no approvals',
    ),
  );
}
