import { z } from 'zod';
import { GROUP_VERSION } from './common.ts';
import { releaseSpecSchema } from './release-spec.ts';
import { releaseStatusSchema } from './release-status.ts';
import {
  clusterSpecSchema,
  gitRepositorySpecSchema,
  lifecycleSpecSchema,
  mutationSpecSchema,
} from './other-kinds.ts';

/** The metadata fields convoy reads; everything else passes through untouched. */
export const objectMetaSchema = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.number().int().optional(),
  resourceVersion: z.string().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  deletionTimestamp: z.string().optional(),
  creationTimestamp: z.string().optional(),
});

const objectOf = <S extends z.ZodType, T extends z.ZodType>(kind: string, spec: S, status: T) =>
  z.object({
    apiVersion: z.literal(GROUP_VERSION),
    kind: z.literal(kind),
    metadata: objectMetaSchema,
    spec,
    status: status.optional(),
  });

export const releaseSchema = objectOf('Release', releaseSpecSchema, releaseStatusSchema);
export const clusterSchema = objectOf('Cluster', clusterSpecSchema, z.unknown());
export const gitRepositorySchema = objectOf('GitRepository', gitRepositorySpecSchema, z.unknown());
export const mutationSchema = objectOf('Mutation', mutationSpecSchema, z.unknown());
export const lifecycleSchema = objectOf('Lifecycle', lifecycleSpecSchema, z.unknown());

export type Release = z.infer<typeof releaseSchema>;
export type Cluster = z.infer<typeof clusterSchema>;
export type GitRepository = z.infer<typeof gitRepositorySchema>;
export type Mutation = z.infer<typeof mutationSchema>;
export type Lifecycle = z.infer<typeof lifecycleSchema>;

/** A zod error as one line per issue, each naming the field path. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** Parses a Release read from the API server, naming the field on failure. */
export function parseRelease(raw: unknown): ParseResult<Release> {
  const parsed = releaseSchema.safeParse(raw);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: describeZodError(parsed.error) };
}

/** The namespace a Release's namespaced objects land in when they name none: spec.targetNamespace, else its own. */
export function targetNamespaceOf(release: Release): string {
  return release.spec.targetNamespace ?? release.metadata.namespace ?? 'default';
}
