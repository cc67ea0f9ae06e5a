/**
 * Every child of one rollout renders the same source: the template's source resolved once by the
 * runtime (a branch or tag to its commit, a chart version range to the exact version), written
 * into each child instead of the moving reference.
 */
import type { Revision } from '../api/release-set.ts';

type SourceFragment = Record<string, unknown>;
const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

export type SourceCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly field: string; readonly message: string; readonly unsupported?: boolean };

/**
 * Whether a template source can be pinned: git or helm, no `${…}` (one resolution serves every
 * Cluster). A gitRepositoryRef cannot be pinned to a commit in a Release spec (its ref lives in the
 * GitRepository), so it is Unsupported for a ReleaseSet.
 */
export function checkTemplateSource(source: SourceFragment): SourceCheck {
  const field = 'spec.template.spec.source';
  if (source['gitRepositoryRef'] !== undefined)
    return {
      ok: false,
      unsupported: true,
      field: `${field}.gitRepositoryRef`,
      message:
        'a ReleaseSet pins every child to one commit; a GitRepository reference cannot be pinned in a Release, use source.git',
    };
  if (JSON.stringify(source).includes('${'))
    return {
      ok: false,
      field,
      message: 'the source may not use ${cluster.…}: it is resolved once for the whole rollout',
    };
  if (!isObject(source['git']) && !isObject(source['helm'])) {
    const kind = Object.keys(source)[0];
    return kind === undefined
      ? { ok: false, field, message: 'set git or helm' }
      : {
          ok: false,
          unsupported: true,
          field: `${field}.${kind}`,
          message: `a ReleaseSet pins git and helm sources; a ${kind} source is not supported yet`,
        };
  }
  return { ok: true };
}

/** The template source with its moving reference replaced by the resolved one. */
export function pinSource(source: SourceFragment, resolved: Revision['source']): SourceFragment {
  const git = source['git'];
  if (isObject(git) && resolved.git !== undefined)
    return { ...source, git: { ...git, ref: { commit: resolved.git.commit } } };
  const helm = source['helm'];
  if (isObject(helm) && resolved.helm !== undefined) {
    if (helm['digest'] !== undefined) return source;
    return { ...source, helm: { ...helm, version: resolved.helm.version } };
  }
  return source;
}

/** Whether what the runtime resolved is for the kind of source the template has. */
export function resolvedMatches(source: SourceFragment, resolved: Revision['source']): boolean {
  return isObject(source['git']) ? resolved.git !== undefined : resolved.helm !== undefined;
}
