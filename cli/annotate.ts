/**
 * `sync [--force]`, `pin <renderRef>`, `unpin`, `suspend`, `resume`: small
 * merge patches on the Release with the user's own identity (their RBAC
 * decides: `patch` on releases.convoy.dev). The annotations are metadata, so
 * the generation does not change; suspend/resume change spec.suspend.
 */
import { Annotation } from '../domain/reconcile/annotations.ts';
import { toRfc3339 } from '../domain/status/conditions.ts';
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import { apiTarget, storedRenders } from './http-api.ts';
import { patchRelease, readRelease } from './kube.ts';
import { ExitCode, UsageError } from './output.ts';
import { resolveRenderRef } from './render-refs.ts';
import type { Session } from './session.ts';
import { msToLateInSecond, waitForSync } from './sync-wait.ts';

export async function syncVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ force: boolean; wait: boolean; timeout: string }>(input);
  const key = releaseKey('sync', positionals, values);
  if (values.wait !== true && values.timeout !== undefined)
    throw new UsageError('sync: --timeout bounds --wait; add --wait');
  const annotation = values.force ? Annotation.forceSyncRequestedAt : Annotation.syncRequestedAt;
  // With --wait, the request is written late in its second (sync-wait.ts says why).
  if (values.wait === true) await s.sleep(msToLateInSecond(Date.now()));
  const value = toRfc3339(new Date());
  await patchRelease(await s.cluster(values), key, { metadata: { annotations: { [annotation]: value } } });
  s.io.out(
    `${values.force ? 'force sync' : 'sync'} requested for ${key.namespace}/${key.name} at ${value} (${annotation})`,
  );
  if (values.wait !== true) return ExitCode.ok;
  return waitForSync(input, s, key, { value, force: values.force === true });
}

export async function pinVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ api: string }>(input);
  const key = releaseKey('pin', positionals, values, 1);
  const cluster = await s.cluster(values);
  const api = apiTarget(values.api, s.env, cluster);
  const stored = api === undefined ? [] : (await storedRenders(api, key)).map((r) => r.renderRef);
  const renderRef = resolveRenderRef('pin', await readRelease(cluster, key), positionals[1], stored);
  await patchRelease(cluster, key, { metadata: { annotations: { [Annotation.pin]: renderRef } } });
  s.io.out(`${key.namespace}/${key.name} pinned to ${renderRef}`);
  return ExitCode.ok;
}

export async function unpinVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs(input);
  const key = releaseKey('unpin', positionals, values);
  await patchRelease(await s.cluster(values), key, { metadata: { annotations: { [Annotation.pin]: null } } });
  s.io.out(`${key.namespace}/${key.name} unpinned: it follows its source again`);
  return ExitCode.ok;
}

async function setSuspend(verb: 'suspend' | 'resume', input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs(input);
  const key = releaseKey(verb, positionals, values);
  await patchRelease(await s.cluster(values), key, { spec: { suspend: verb === 'suspend' } });
  s.io.out(
    verb === 'suspend'
      ? `${key.namespace}/${key.name} suspended: no reconcile until convoy resume`
      : `${key.namespace}/${key.name} resumed`,
  );
  return ExitCode.ok;
}

export const suspendVerb = (input: VerbInput, s: Session) => setSuspend('suspend', input, s);
export const resumeVerb = (input: VerbInput, s: Session) => setSuspend('resume', input, s);
