/**
 * ReleaseSet: one declaration rolled out to many Clusters step by step. This file is what its user
 * writes (the spec: which Clusters, the child template, overrides, the rollout); what convoy writes
 * back (the status) is release-set-status.ts. The pure logic that reads it lives in domain/fleet/;
 * docs/fleet.md explains the model.
 */
import { z } from 'zod';
import { GROUP_VERSION, PRESERVE_UNKNOWN, celRules, duration, objectName, stringMap } from './common.ts';
import { describeZodError, objectMetaSchema, type ParseResult } from './objects.ts';
import { releaseSetStatusSchema } from './release-set-status.ts';

export {
  failingClusterSchema,
  releaseSetStatusSchema,
  revisionSchema,
  rolloutStates,
  stepStates,
  type FailingCluster,
  type ReleaseSetStatus,
  type Revision,
} from './release-set-status.ts';

export const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
const PERCENT = /^(100|[1-9][0-9]?)%$/;

export const labelKey = z
  .string()
  .min(1)
  .max(317)
  .regex(LABEL_KEY, { message: 'must be a label key: [prefix/]name, name at most 63 characters' })
  .describe('A label key.');

export const labelValue = z
  .string()
  .max(63)
  .regex(LABEL_VALUE, {
    message: 'must be a label value: at most 63 letters, digits, -, _ or ., starting and ending alphanumeric',
  })
  .describe('A label value.');

const matchExpressionSchema = z
  .object({
    key: labelKey,
    operator: z
      .enum(['In', 'NotIn', 'Exists', 'DoesNotExist'])
      .describe('How the key and values are matched.'),
    values: z
      .array(labelValue)
      .max(64)
      .optional()
      .describe('Required and non-empty for In and NotIn; absent for Exists and DoesNotExist.'),
  })
  .meta(
    celRules({
      rule: "(self.operator == 'In' || self.operator == 'NotIn') == (has(self.values) && size(self.values) > 0)",
      message: 'values must be non-empty for In and NotIn, and absent for Exists and DoesNotExist',
    }),
  )
  .describe('A label requirement, as in Kubernetes label selectors.');

/** A Kubernetes label selector over Cluster labels; `{}` selects every Cluster. */
export const clusterSelectorSchema = z
  .object({
    matchLabels: z.record(z.string(), labelValue).optional().describe('Labels the Cluster must have.'),
    matchExpressions: z
      .array(matchExpressionSchema)
      .max(16)
      .optional()
      .describe('Requirements, all of which must hold.'),
  })
  .describe('Selects Clusters by label, as a Kubernetes label selector; {} selects all.');

export type ClusterSelector = z.infer<typeof clusterSelectorSchema>;

const clusterNames = (description: string) =>
  z
    .array(objectName('Name of a Cluster in the namespace of the ReleaseSet.'))
    .max(5000)
    .describe(description);

/**
 * A count of Clusters or a percentage such as 25% (1%–100%). In the CRD an int-or-string whose
 * minimum applies to an integer and whose pattern to a string (a structural schema allows no
 * typed anyOf branches with their own validations, and a CEL regex over an unbounded string costs
 * too much).
 */
const countOrPercent = (min: 0 | 1, description: string) =>
  z
    .custom<number | string>(
      (v) =>
        (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= 100000) ||
        (typeof v === 'string' && PERCENT.test(v)),
      { message: `must be a count of at least ${min} or a percentage from 1% to 100%` },
    )
    .meta({
      'x-kubernetes-int-or-string': true,
      minimum: min,
      maximum: 100000,
      maxLength: 4,
      pattern: PERCENT.source,
    })
    .describe(`${description} An integer of at least ${min}, or a percentage from 1% to 100%.`);

const maxConcurrent = countOrPercent(
  1,
  'How many Clusters of a step may be updating (written but not yet ready) at once: a count ≥ 1 or a percentage of the step, rounded up.',
);
const maxFailures = countOrPercent(
  0,
  'How many failed Clusters a step tolerates: a count ≥ 0 or a percentage of the step, rounded down. One more fails the step.',
);
const onFailure = z
  .enum(['Halt', 'RollbackFleet'])
  .describe(
    'Halt: stop where the rollout is. RollbackFleet: return every Cluster the rollout updated to lastSucceededRevision at once.',
  );

const stepSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: 'must be a DNS label' })
      .describe('Name of the step, unique in the set.'),
    clusters: clusterSelectorSchema.describe(
      'The Clusters of the step; a Cluster belongs to the first step that selects it.',
    ),
    maxConcurrent: maxConcurrent.optional(),
    maxFailures: maxFailures.optional(),
    minHealthyTime: duration(
      'How long every Cluster of the step stays ready before the next step starts.',
    ).optional(),
    stepTimeout: duration(
      'Longest time from the start of the step until all its Clusters are ready.',
    ).optional(),
    onFailure: onFailure.optional(),
    approval: z
      .enum(['Required'])
      .optional()
      .describe(
        'Required: the step starts only after the annotation convoy.dev/approve is <step name>@<status.revision.id>.',
      ),
  })
  .describe('One step of the rollout; knobs left out come from spec.rollout.');

export const rolloutSpecSchema = z
  .object({
    paused: z
      .boolean()
      .default(false)
      .describe('true: no child is written or deleted until unpaused; status keeps being reported.'),
    maxConcurrent: maxConcurrent.default('100%'),
    maxFailures: maxFailures.default(0),
    minHealthyTime: duration(
      'How long every Cluster of a step stays ready before the next step starts.',
    ).default('0s'),
    stepTimeout: duration('Longest time from the start of a step until all its Clusters are ready.').default(
      '30m',
    ),
    onFailure: onFailure.default('Halt'),
    steps: z
      .array(stepSchema)
      .max(32)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
      .optional()
      .describe('Ordered steps. Clusters that no step selects form an implicit last step.'),
  })
  .describe('How the set rolls a new revision out.');

export type RolloutSpec = z.infer<typeof rolloutSpecSchema>;
export type RolloutStepSpec = z.infer<typeof stepSchema>;

/**
 * A Release spec fragment. It is not typed at admission because `${cluster.…}` may stand in a field
 * whose final value has a pattern (targetNamespace: ${cluster.name}); every generated child is
 * validated with the Release schema before anything is written (Generated False/TemplateFailed).
 */
const releaseSpecFragment = <S extends z.core.$ZodLooseShape>(description: string, shape: S) =>
  z
    .looseObject({
      ...shape,
      cluster: z
        .record(z.string(), z.unknown())
        .optional()
        .describe('Not allowed: each child targets the Cluster it is generated for.'),
    })
    .meta({
      ...PRESERVE_UNKNOWN,
      ...celRules({
        rule: '!has(self.cluster)',
        message: 'cluster is not allowed: each child Release targets the Cluster it is generated for',
      }),
    })
    .describe(description);

export const releaseSetSpecSchema = z
  .object({
    clusters: z
      .object({
        selector: clusterSelectorSchema.optional(),
        names: clusterNames('Clusters selected by name.').optional(),
        exclude: clusterNames(
          'Clusters never selected, even when the selector or names select them.',
        ).optional(),
        onRemoval: z
          .enum(['Delete', 'Orphan'])
          .default('Delete')
          .describe(
            'What happens to the child Release of a Cluster that stops matching: Delete it, or Orphan it (it stays, no longer owned).',
          ),
      })
      .meta(
        celRules({ rule: 'has(self.selector) || has(self.names)', message: 'set selector, names or both' }),
      )
      .describe(
        'The Clusters in the namespace of the set: those the selector or names select, minus exclude.',
      ),
    template: z
      .object({
        metadata: z
          .object({
            labels: stringMap('Labels of each child Release.').optional(),
            annotations: stringMap('Annotations of each child Release.').optional(),
          })
          .optional()
          .describe('Labels and annotations of each child Release; ${cluster.…} is substituted in values.'),
        spec: releaseSpecFragment(
          'A Release spec without cluster. In every string ${cluster.name}, ${cluster.labels.<key>} and ${cluster.annotations.<key>} are substituted; $${ is a literal ${.',
          {
            source: z
              .record(z.string(), z.unknown())
              .meta(PRESERVE_UNKNOWN)
              .describe('The source of every child: git or helm.'),
          },
        ),
      })
      .describe('The child Release generated for each Cluster.'),
    overrides: z
      .array(
        z
          .object({
            clusters: clusterSelectorSchema.describe('The Clusters this override applies to.'),
            spec: releaseSpecFragment(
              'Merged over the template as a JSON merge patch (RFC 7386): objects merge, lists and values replace, null removes.',
              {},
            ),
          })
          .describe('A partial Release spec for the Clusters it selects.'),
      )
      .max(64)
      .optional()
      .describe('Applied in order over the template; later wins.'),
    rollout: rolloutSpecSchema.prefault({}),
  })
  .describe(
    'A declaration rolled out to many Clusters: one child Release <set>-<cluster> per selected Cluster.',
  );

export type ReleaseSetSpec = z.infer<typeof releaseSetSpecSchema>;

export const releaseSetSchema = z.object({
  apiVersion: z.literal(GROUP_VERSION),
  kind: z.literal('ReleaseSet'),
  metadata: objectMetaSchema,
  spec: releaseSetSpecSchema,
  status: releaseSetStatusSchema.optional(),
});

export type ReleaseSet = z.infer<typeof releaseSetSchema>;

/** Parses a ReleaseSet read from the API server, naming the field on failure. */
export function parseReleaseSet(raw: unknown): ParseResult<ReleaseSet> {
  const parsed = releaseSetSchema.safeParse(raw);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, error: describeZodError(parsed.error) };
}
