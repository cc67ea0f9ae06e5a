/**
 * `convoy tree <release>`: the objects of the applied render, each with its
 * sync (does a server-side dry run change it?) and its health (the rules of
 * domain/health, with the Release's checks). The render is made on this
 * machine at the applied source revision (status.lastSuccessful).
 */
import type { GitRef, Release } from '../domain/api/index.ts';
import { assessObject, compileChecks } from '../domain/health/index.ts';
import { parseVerbArgs, releaseKey } from './args.ts';
import { readRelease } from './kube.ts';
import { comparable, compareWithLive, targetConfig, type Compared } from './live-compare.ts';
import { renderLocally } from './local-render.ts';
import { ExitCode, table } from './output.ts';
import type { Session } from './session.ts';
import { canonicalYaml } from './text-diff.ts';

/** One object of the tree: its sync and health. Shared with the dashboard (relay/http/release-views.ts). */
export interface ObjectState {
  kind: string;
  namespace: string;
  name: string;
  sync: 'Synced' | 'OutOfSync' | 'Missing' | 'Unknown';
  health: string;
  message: string;
}

export function objectStates(compared: readonly Compared[], release: Release, now = new Date()): ObjectState[] {
  const checks = compileChecks(release.spec.healthAssessment?.checks ?? []).compiled;
  return compared.map((c) => {
    const sync =
      c.desired === undefined
        ? 'Unknown'
        : c.live === undefined
          ? 'Missing'
          : canonicalYaml(comparable(c.live)) === canonicalYaml(comparable(c.desired))
            ? 'Synced'
            : 'OutOfSync';
    const health = assessObject(c.live, { checks, now });
    return {
      kind: c.object.kind,
      namespace: c.object.metadata.namespace ?? '',
      name: c.object.metadata.name,
      sync,
      health: health.state,
      message: health.message.replace(/\s+/g, ' '),
    };
  });
}

export async function treeVerb(argv: readonly string[], s: Session): Promise<ExitCode> {
  const { values, positionals } = parseVerbArgs('tree', argv, {});
  const key = releaseKey('tree', positionals, values.namespace);
  const cluster = s.cluster(values);
  const release = await readRelease(cluster, key);
  const commit = release.status?.lastSuccessful?.resolvedSource?.git?.commit;
  const ref: GitRef | undefined =
    commit === undefined || !('git' in release.spec.source) ? undefined : { commit };
  const render = await renderLocally(cluster, release, ref);
  const compared = await compareWithLive(await targetConfig(cluster, release), render.objects);
  const rows = objectStates(compared, release).map((o) => [
    o.kind,
    o.namespace,
    o.name,
    o.sync,
    o.health,
    o.message,
  ]);
  s.io.out(
    `${key.namespace}/${key.name}  render ${render.renderRef}${render.revision ? `  revision ${render.revision}` : ''}`,
  );
  for (const line of table(['KIND', 'NAMESPACE', 'NAME', 'SYNC', 'HEALTH', 'MESSAGE'], rows))
    s.io.out(`  ${line}`);
  return ExitCode.ok;
}
