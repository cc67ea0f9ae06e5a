/**
 * `convoy tree <release>`: the objects of the applied render, each with its
 * sync (does a server-side dry run change it?) and its health (the rules of
 * domain/health, with the Release's checks). The render is made on this
 * machine at the applied source revision (status.lastSuccessful).
 */
import type { GitRef } from '../domain/api/index.ts';
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import { readRelease } from './kube.ts';
import { compareWithLive, targetConfig } from '../views/live-compare.ts';
import { objectStates } from '../views/object-states.ts';
import { renderLocally } from './local-render.ts';
import { ExitCode, table } from './output.ts';
import type { Session } from './session.ts';

export async function treeVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs(input);
  const key = releaseKey('tree', positionals, values);
  const cluster = await s.cluster(values);
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
