/**
 * The revision of a rollout: what the template and overrides say (templateHash) plus the source
 * resolved once for the rollout (Git commit, chart version). Every child carries its id in
 * convoy.dev/release-set-revision, so "updated" is read from the children, not remembered.
 */
import { createHash } from 'node:crypto';
import type { ReleaseSetSpec, Revision } from '../api/release-set.ts';

/** JSON with keys sorted at every level. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** sha256 of the template and the overrides; the rollout knobs and the cluster selection are not part of it. */
export function templateHash(spec: Pick<ReleaseSetSpec, 'template' | 'overrides'>): string {
  return `sha256:${sha256(canonicalJson({ template: spec.template, overrides: spec.overrides ?? [] }))}`;
}

export function revisionOf(hash: string, source: Revision['source']): Revision {
  const id = sha256(canonicalJson({ templateHash: hash, source })).slice(0, 16);
  return { id, templateHash: hash, source };
}
