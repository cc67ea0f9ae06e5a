/**
 * The status of a ReleaseSet: the revision being rolled out and the last one that succeeded, where
 * the rollout stands, per-step and per-condition counts of the children, and the failing and held
 * Clusters. Written by the field manager convoy-releaseset only; the spec is release-set.ts.
 */
import { z } from 'zod';
import { conditionsList } from './common.ts';

const timestamp = (description: string) => z.iso.datetime().describe(description);

const resolvedSetSourceSchema = z
  .object({
    git: z
      .object({ url: z.string(), commit: z.string() })
      .optional()
      .describe('The commit every child is pinned to.'),
    helm: z
      .object({
        repository: z.string(),
        chart: z.string(),
        version: z.string(),
        digest: z.string().optional(),
      })
      .optional()
      .describe('The exact chart version every child is pinned to.'),
  })
  .describe('The source as resolved once for the rollout.');

export const revisionSchema = z
  .object({
    id: z
      .string()
      .describe(
        'First 16 hex digits of sha256(templateHash, source): the value children carry in convoy.dev/release-set-revision.',
      ),
    templateHash: z.string().describe('sha256 of spec.template and spec.overrides.'),
    source: resolvedSetSourceSchema,
  })
  .describe('What one rollout delivers.');

export type Revision = z.infer<typeof revisionSchema>;

export const rolloutStates = [
  'Progressing',
  'Paused',
  'WaitingForApproval',
  'Succeeded',
  'Halted',
  'RolledBack',
] as const;
export const stepStates = [
  'Pending',
  'WaitingForApproval',
  'Progressing',
  'Soaking',
  'Succeeded',
  'Failed',
] as const;

const count = z.number().int().min(0);
const statusCounts = z
  .object({ True: count, False: count, Unknown: count })
  .describe('Children with the condition True, False or Unknown.');

export const failingClusterSchema = z
  .object({
    cluster: z.string(),
    release: z.string(),
    signal: z
      .string()
      .describe('The signal the combined verdict of the child names first (Applied, InSync, Healthy, …).'),
    reason: z.string(),
    message: z.string().max(256),
    since: timestamp('When the condition named last changed, or when the failure was seen.').optional(),
  })
  .describe('A failing Cluster.');

export type FailingCluster = z.infer<typeof failingClusterSchema>;

export const releaseSetStatusSchema = z
  .object({
    observedGeneration: z.number().int().min(0).optional(),
    revision: revisionSchema.optional(),
    lastSucceededRevision: revisionSchema.optional(),
    rollout: z
      .object({
        state: z.enum(rolloutStates),
        step: z.number().int().min(0).describe('Index of the current step in status.steps.'),
        stepName: z.string(),
        stepStartedAt: timestamp('When the current step started (after its approval).').optional(),
        healthySince: timestamp(
          'Since when every Cluster of the current step has been ready (the soak).',
        ).optional(),
      })
      .optional(),
    clusters: z
      .object({ selected: count, updated: count, ready: count, waiting: count, failed: count })
      .optional()
      .describe(
        'updated: children at status.revision; ready: updated and Ready; failed: updated and failing; waiting: the rest.',
      ),
    releaseConditions: z
      .object({
        Applied: statusCounts,
        InSync: statusCounts,
        Healthy: statusCounts,
        RolloutSucceeded: statusCounts,
      })
      .optional()
      .describe(
        'Per condition of the child Releases, how many are True, False and Unknown (a child without the condition is not counted).',
      ),
    steps: z
      .array(
        z.object({
          name: z.string(),
          clusters: count,
          updated: count,
          ready: count,
          failed: count,
          state: z.enum(stepStates),
          finishedAt: timestamp('When the step succeeded or failed.').optional(),
        }),
      )
      .max(33)
      .optional(),
    failing: z.array(failingClusterSchema).max(20).optional().describe('The first 20 failing Clusters.'),
    failingOmitted: count.optional().describe('How many more Clusters fail than failing lists.'),
    held: z
      .array(
        z.object({ cluster: z.string(), release: z.string(), reason: z.enum(['PinnedByUser', 'Suspended']) }),
      )
      .max(20)
      .optional()
      .describe(
        'The first 20 Clusters whose child its user holds (convoy.dev/pin, spec.suspend): counted as waiting, not updated by the set, not blocking their step.',
      ),
    heldOmitted: count.optional().describe('How many more Clusters are held than held lists.'),
    conditions: conditionsList.optional(),
  })
  .describe('The rollout of the set, written by the field manager convoy-releaseset only.');

export type ReleaseSetStatus = z.infer<typeof releaseSetStatusSchema>;
