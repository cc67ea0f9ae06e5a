import { z } from 'zod';
import { conditionsList, duration } from './common.ts';

const timestamp = (description: string) => z.iso.datetime().describe(description);
const renderRefField = (description: string) =>
  z
    .string()
    .regex(/^sha256:[0-9a-f]{64}$/, { message: 'must be sha256:<64 hex digits>' })
    .describe(description);

export const failureStages = [
  'SourceResolution',
  'ClusterResolution',
  'MutationResolution',
  'Rendering',
  'Syncing',
  'HookFailed',
] as const;

const resolvedSourceSchema = z
  .object({
    git: z
      .object({ url: z.string(), ref: z.string(), commit: z.string() })
      .optional()
      .describe('The Git source as resolved: URL, the ref as written, and the commit.'),
    helm: z
      .object({ repository: z.string(), chart: z.string(), version: z.string(), digest: z.string() })
      .optional()
      .describe('The chart as resolved: exact version and the sha256 digest of its archive.'),
    oci: z
      .object({ url: z.string(), digest: z.string(), tag: z.string().optional() })
      .optional()
      .describe(
        'The OCI artifact as resolved: its repository, the sha256 digest of its manifest, and the tag it was found by (none for a digest).',
      ),
  })
  .describe('The source the reconcile resolved.');

export const attemptSchema = z
  .object({
    attemptedAt: timestamp('When the reconcile ran.'),
    phase: z
      .enum(['', 'Rendering', 'Syncing', 'Succeeded', 'Failed'])
      .describe(
        'Succeeded: a render was applied. Failed: a step failed. Empty: the reconcile waits. Syncing: a long apply is under way (see progress).',
      ),
    resolvedSource: resolvedSourceSchema.optional(),
    resolvedCluster: z
      .object({
        name: z.string(),
        uid: z.string().optional(),
        server: z.string().optional(),
        kubernetesVersion: z.string().optional(),
      })
      .optional()
      .describe('The target Cluster as resolved.'),
    resolvedMutations: z
      .array(z.object({ name: z.string(), generation: z.number().int() }))
      .max(256)
      .optional()
      .describe('Mutations applied to the render, in order.'),
    renderRef: renderRefField('Content address of the rendered object set.').optional(),
    progress: z
      .object({
        total: z.number().int().min(0).describe('Objects of the render.'),
        checked: z.number().int().min(0).describe('Objects the pre-apply dry run has checked so far.'),
        applied: z
          .number()
          .int()
          .min(0)
          .describe('Objects the apply has handled so far (written, or unchanged).'),
        updatedAt: timestamp('When these counts were written.'),
      })
      .optional()
      .describe(
        'Only while phase is Syncing: how far a reconcile that runs longer than the progress interval has come.',
      ),
    failure: z
      .object({
        stage: z.enum(failureStages).describe('The step that failed.'),
        reason: z.string().describe('The Applied reason of the failure.'),
        message: z.string().max(32768).describe('What failed, on which object, and what to do.'),
        hookName: z.string().optional().describe('The hook, when stage is HookFailed.'),
        hookPhase: z
          .enum(['PreSync', 'PostSync'])
          .optional()
          .describe('The hook phase, when stage is HookFailed.'),
      })
      .optional()
      .describe('Only when phase is Failed.'),
  })
  .describe('One reconcile attempt.');

export type Attempt = z.infer<typeof attemptSchema>;

const waveSchema = z.object({
  wave: z.number().int(),
  objects: z.number().int().min(0),
  state: z.enum(['Pending', 'Applied', 'Healthy', 'TimedOut']),
  appliedAt: timestamp('When the wave was applied.').optional(),
  healthyAt: timestamp('When every object of the wave was healthy.').optional(),
});

const hookStatusSchema = z.object({
  name: z.string(),
  phase: z.enum(['PreSync', 'PostSync']),
  renderRef: z.string().optional(),
  state: z.enum(['Pending', 'Running', 'Succeeded', 'Failed']),
  job: z.string().optional(),
  startedAt: timestamp('When the hook Job started.').optional(),
  finishedAt: timestamp('When the hook Job finished.').optional(),
  message: z.string().max(4096).optional(),
});

const healthSummarySchema = z
  .object({
    renderRef: z.string(),
    checkedAt: timestamp('When the assessment ran.'),
    total: z.number().int().min(0),
    healthy: z.number().int().min(0),
    progressing: z.number().int().min(0),
    degraded: z.number().int().min(0),
    missing: z.number().int().min(0),
    unknown: z.number().int().min(0),
    objects: z
      .array(
        z.object({
          apiVersion: z.string(),
          kind: z.string(),
          namespace: z.string().optional(),
          name: z.string(),
          state: z.string(),
          message: z.string().max(4096).optional(),
        }),
      )
      .max(20)
      .describe('Objects that are not healthy, at most 20.'),
  })
  .describe('Health of the current render; written by convoy-health only.');

export const releaseStatusSchema = z
  .object({
    observedGeneration: z.number().int().min(0).optional(),
    reconciledAt: timestamp('Time of the last status write by the controller-manager.').optional(),
    lastHandledSyncAt: z.string().optional().describe('The last /sync request applied in manual sync mode.'),
    lastHandledForceSyncAt: z
      .string()
      .optional()
      .describe('The last /sync?force=true request handled (set even when that reconcile failed).'),
    lastAttempted: attemptSchema.optional(),
    lastSuccessful: attemptSchema.optional(),
    lastHealthy: attemptSchema.optional(),
    rollout: z
      .object({
        renderRef: z.string(),
        previousRenderRef: z.string().optional(),
        state: z.enum(['Progressing', 'Succeeded', 'Failed', 'RolledBack']),
        startedAt: timestamp('When the rollout started.').optional(),
        finishedAt: timestamp('When the rollout finished.').optional(),
        wave: z.number().int().optional(),
      })
      .optional()
      .describe('The rollout of the newest applied render.'),
    waves: z.array(waveSchema).max(256).optional().describe('One entry per sync wave of rollout.renderRef.'),
    pin: z
      .object({ renderRef: z.string(), state: z.enum(['Active', 'NotFound', 'NoStore']) })
      .optional()
      .describe('The pinned render; absent when unpinned.'),
    lifecycle: z.object({ hooks: z.array(hookStatusSchema).max(64).optional() }).optional(),
    resolvedRetentionPolicy: z
      .object({ maxRenders: z.number().int().min(1), maxAge: duration('Maximum render age.') })
      .optional(),
    healthSummary: healthSummarySchema.optional(),
    conditions: conditionsList.optional(),
  })
  .describe('What convoy did and what it sees. See the status specification.');

export type ReleaseStatus = z.infer<typeof releaseStatusSchema>;
export type HealthSummary = z.infer<typeof healthSummarySchema>;
export type WaveStatus = z.infer<typeof waveSchema>;
export type HookStatus = z.infer<typeof hookStatusSchema>;
