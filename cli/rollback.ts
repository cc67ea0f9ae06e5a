/**
 * `convoy rollback <release> [--to <renderRef> | --last-healthy]`: pins the Release to an
 * earlier render, like `helm rollback` and `argocd app rollback`:
 *
 * - by default the render applied before the current one (status.rollout.previousRenderRef: the
 *   applied render when the newest rollout started), so a second rollback goes forward again, as
 *   with Helm;
 * - `--to <ref>` (or the second operand) another render, full or short, that the status names or
 *   the HTTP API has stored;
 * - `--last-healthy` status.lastHealthy.renderRef (the target `rollback` chose before it followed `helm rollback`).
 *
 * The choice is domain/status/rollback-target.ts, the same as the HTTP API's and the dashboard's.
 * The pin stops the Release following its source; the line printed says which render it pinned
 * and that `convoy unpin` follows the source again.
 */
import type { Release } from '../domain/api/objects.ts';
import { Annotation } from '../domain/reconcile/annotations.ts';
import { rollbackTarget } from '../domain/status/rollback-target.ts';
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import { apiTarget, storedRenders } from './http-api.ts';
import { patchRelease, readRelease } from './kube.ts';
import { CliFailure, ExitCode, UsageError } from './output.ts';
import { knownRenders, resolveRenderRef } from './render-refs.ts';
import type { Session } from './session.ts';

interface RollbackFlags {
  to: string;
  'last-healthy': boolean;
  api: string;
}

function revisionOf(release: Release, ref: string): string {
  const revision = knownRenders(release).find((k) => k.renderRef === ref)?.revision;
  return revision === undefined ? '' : `, revision ${revision.slice(0, 12)}`;
}

export async function rollbackVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<RollbackFlags>(input);
  const key = releaseKey('rollback', positionals, values, 1);
  const typed = values.to ?? positionals[1];
  if (values.to !== undefined && positionals[1] !== undefined && positionals[1] !== values.to)
    throw new UsageError(
      `rollback: --to ${values.to} and the operand ${positionals[1]} name two renders; give one`,
    );
  if (typed !== undefined && values['last-healthy'] === true)
    throw new UsageError(
      'rollback: --to names a render and --last-healthy asks for the last healthy one; give one of them',
    );
  const cluster = await s.cluster(values);
  const release = await readRelease(cluster, key);
  const name = `${key.namespace}/${key.name}`;
  let to: string | undefined;
  if (typed !== undefined) {
    const api = apiTarget(values.api, s.env, cluster);
    const stored = api === undefined ? [] : (await storedRenders(api, key)).map((r) => r.renderRef);
    to = resolveRenderRef('rollback', release, typed, stored);
  }
  const target = rollbackTarget(release, { to, lastHealthy: values['last-healthy'] === true }, name);
  if (!target.ok) {
    const hint =
      target.reason === 'NoRender'
        ? ''
        : `; name one with convoy rollback ${name} --to <renderRef> (convoy history ${name} lists them)`;
    throw new CliFailure(`${target.message}${hint}`);
  }
  await patchRelease(cluster, key, { metadata: { annotations: { [Annotation.pin]: target.ref } } });
  const src = release.spec.source as { git?: unknown; gitRepositoryRef?: unknown; helm?: unknown };
  const source =
    src.git !== undefined || src.gitRepositoryRef !== undefined
      ? 'Git'
      : src.helm !== undefined
        ? 'its Helm chart'
        : 'its source';
  s.io.out(
    `${name} rolled back: pinned to ${target.ref} (${target.why}${revisionOf(release, target.ref)}); it no longer follows ${source}: convoy unpin ${name} resumes following ${source}`,
  );
  return ExitCode.ok;
}
