/**
 * A light check of a Release as the API server returned it, for printing its row (`convoy get`):
 * the fields the row and the verdict read have the right types. `get` does not load the full
 * schema (domain/api/objects.ts: zod and, through it, semver, ~140 modules and most of the CLI's
 * start time); the verbs that act on a Release still parse it fully (cli/kube.ts readRelease).
 * The API server has validated the object against the CRD's schema already; this only keeps a
 * malformed object (an older CRD, a hand-made status) from becoming a TypeError.
 */
import type { Release } from '../domain/api/objects.ts';
import { CliFailure } from './output.ts';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** What is wrong with the shape, or undefined. */
export function releaseShapeProblem(raw: unknown): string | undefined {
  if (!isObject(raw)) return 'not an object';
  const { metadata, spec, status } = raw;
  if (!isObject(metadata) || typeof metadata.name !== 'string') return 'metadata.name is not a string';
  if (!isObject(spec)) return 'spec is not an object';
  if (!isObject(spec.source)) return 'spec.source is not an object';
  if (status === undefined) return undefined;
  if (!isObject(status)) return 'status is not an object';
  const conditions = status.conditions;
  if (conditions !== undefined) {
    if (!Array.isArray(conditions)) return 'status.conditions is not a list';
    const bad = conditions.findIndex(
      (c) => !isObject(c) || typeof c.type !== 'string' || typeof c.status !== 'string',
    );
    if (bad !== -1) return `status.conditions[${bad}] has no string type and status`;
  }
  for (const field of ['rollout', 'lastAttempted', 'lastSuccessful', 'lastHealthy', 'health', 'pin'] as const)
    if (status[field] !== undefined && !isObject(status[field])) return `status.${field} is not an object`;
  return undefined;
}

/** The Release for printing; one line naming the Release and the field when its shape is wrong. */
export function printableRelease(raw: unknown, key: { namespace: string; name: string }): Release {
  const problem = releaseShapeProblem(raw);
  if (problem !== undefined)
    throw new CliFailure(`Release ${key.namespace}/${key.name} does not parse: ${problem}`);
  return raw as Release;
}
