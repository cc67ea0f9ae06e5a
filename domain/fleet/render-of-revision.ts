/**
 * A fleet rollback whose child did not record the render it ran at the revision it goes back to
 * (writes.ts: renderRef undefined): the runtime lists the child's stored renders and pins the
 * newest one made from that revision's source — the same commit, or the same chart version.
 */
import type { Revision } from '../api/release-set.ts';

export interface RenderCandidate {
  readonly renderRef: string;
  /** The status resolvedSource the render was made from (the store's meta; may be absent). */
  readonly resolvedSource?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether a render's resolvedSource is the revision's source. */
export function renderMatchesRevision(resolvedSource: unknown, revision: Revision): boolean {
  if (!isObject(resolvedSource)) return false;
  const { git, helm } = revision.source;
  const renderedGit = resolvedSource['git'];
  if (git !== undefined) return isObject(renderedGit) && renderedGit['commit'] === git.commit;
  const renderedHelm = resolvedSource['helm'];
  if (helm !== undefined)
    return (
      isObject(renderedHelm) &&
      renderedHelm['chart'] === helm.chart &&
      renderedHelm['version'] === helm.version &&
      (helm.digest === undefined || renderedHelm['digest'] === helm.digest)
    );
  return false;
}

/** The first (the store lists newest first) render made from `revision`'s source; undefined: none. */
export function renderOfRevision(
  renders: readonly RenderCandidate[],
  revision: Revision,
): string | undefined {
  return renders.find((render) => renderMatchesRevision(render.resolvedSource, revision))?.renderRef;
}
