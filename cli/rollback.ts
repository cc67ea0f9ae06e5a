/**
 * `convoy rollback <release> [renderRef]`: pins the Release to a render —
 * by default the last healthy one (status.lastHealthy.renderRef) — like
 * `argocd app rollback`. `convoy unpin` follows the source again.
 */
import { Annotation } from '../domain/reconcile/annotations.ts';
import { parseVerbArgs, releaseKey } from './args.ts';
import { apiTarget, storedRenders } from './http-api.ts';
import { patchRelease, readRelease } from './kube.ts';
import { CliFailure, ExitCode } from './output.ts';
import { resolveRenderRef } from './render-refs.ts';
import type { Session } from './session.ts';

export async function rollbackVerb(argv: readonly string[], s: Session): Promise<ExitCode> {
  const { values, positionals } = parseVerbArgs('rollback', argv, { api: { type: 'string' } });
  const key = releaseKey('rollback', positionals, values.namespace, 1);
  const cluster = await s.cluster(values);
  const release = await readRelease(cluster, key);
  let target: string;
  if (positionals[1] !== undefined) {
    const api = apiTarget(values.api, s.env, cluster);
    const stored = api === undefined ? [] : (await storedRenders(api, key)).map((r) => r.renderRef);
    target = resolveRenderRef('rollback', release, positionals[1], stored);
  } else {
    const healthy = release.status?.lastHealthy?.renderRef;
    if (healthy === undefined)
      throw new CliFailure(
        `Release ${key.namespace}/${key.name} has no healthy render to roll back to (status.lastHealthy is not set); name one: convoy rollback ${key.namespace}/${key.name} <renderRef>`,
      );
    target = healthy;
  }
  await patchRelease(cluster, key, { metadata: { annotations: { [Annotation.pin]: target } } });
  s.io.out(
    `${key.namespace}/${key.name} rolled back: pinned to ${target}${positionals[1] === undefined ? ' (the last healthy render)' : ''}; convoy unpin follows the source again`,
  );
  return ExitCode.ok;
}
