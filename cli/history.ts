/**
 * `convoy history <release>`: the renders, newest first: when, the source
 * revision, the renderRef, and which is applied / healthy / pinned. The
 * stored renders come from the HTTP API (--api / CONVOY_API_URL); without it,
 * the renders the status names (attempted, applied, healthy, previous, pinned).
 */
import type { Release } from '../domain/api/objects.ts';
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import { apiTarget, storedRenders } from './http-api.ts';
import { readRelease } from './kube.ts';
import { ExitCode, table } from './output.ts';
import { knownRenders, type KnownRender } from './render-refs.ts';
import { revisionOf, type ResolvedSourceLike } from './revision.ts';
import type { Session } from './session.ts';

function rolesOf(release: Release, ref: string): string {
  return (
    knownRenders(release)
      .find((k) => k.renderRef === ref)
      ?.roles.join(',') ?? ''
  );
}

export async function historyVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs<{ api: string }>(input);
  const key = releaseKey('history', positionals, values);
  const cluster = await s.cluster(values);
  const release = await readRelease(cluster, key);
  const api = apiTarget(values.api, s.env, cluster);
  let rows: string[][];
  if (api !== undefined) {
    const renders = await storedRenders(api, key);
    rows = renders.map((r) => [
      r.createdAt,
      revisionOf(r.resolvedSource as ResolvedSourceLike | undefined) ?? '-',
      r.renderRef,
      rolesOf(release, r.renderRef) || '-',
    ]);
  } else {
    const known: KnownRender[] = knownRenders(release).sort((a, b) => (b.at ?? '').localeCompare(a.at ?? ''));
    rows = known.map((k) => [k.at ?? '-', k.revision?.slice(0, 12) ?? '-', k.renderRef, k.roles.join(',')]);
    s.io.err(
      'convoy: showing the renders the status names; set --api or CONVOY_API_URL for every stored render',
    );
  }
  for (const line of table(['TIME', 'REVISION', 'RENDER', 'ROLE'], rows)) s.io.out(line);
  return ExitCode.ok;
}
