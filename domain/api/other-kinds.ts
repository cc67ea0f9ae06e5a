import { z } from 'zod';
import {
  PRESERVE_UNKNOWN,
  celRules,
  conditionsList,
  duration,
  referenceNamespace,
  objectName,
  stringMap,
} from './common.ts';
import { gitSourceSchema } from './git-ref.ts';

export const clusterSpecSchema = z
  .object({
    inCluster: z.boolean().optional().describe('true: the management cluster itself.'),
    kubeConfig: z
      .object({
        secretRef: z
          .object({
            name: objectName('Name of the Secret.'),
            namespace: referenceNamespace,
            key: z.string().min(1).max(253).default('value').describe('Key holding the kubeconfig.'),
          })
          .describe('A Secret holding a kubeconfig.'),
      })
      .optional()
      .describe('Reach the cluster with a kubeconfig stored in a Secret.'),
    eks: z
      .object({
        name: z
          .string()
          .min(1)
          .max(100)
          .regex(/^[0-9A-Za-z][A-Za-z0-9\-_]*$/, { message: 'must be an EKS cluster name' })
          .describe('Name of the EKS cluster.'),
        region: z
          .string()
          .min(1)
          .max(32)
          .regex(/^[a-z]{2}(-[a-z]+)+-[0-9]+$/, { message: 'must be an AWS region such as eu-west-1' })
          .describe('AWS region of the cluster.'),
        roleArn: z
          .string()
          .max(2048)
          .regex(/^arn:aws[a-z-]*:iam::[0-9]{12}:role\/.+$/, { message: 'must be an IAM role ARN' })
          .optional()
          .describe("A role to assume for the cluster; default the functions' own role."),
      })
      .optional()
      .describe(
        'Reach an EKS cluster with a bearer token convoy mints from its IAM identity (no exec plugin, no stored token).',
      ),
  })
  .meta(
    celRules({
      rule: '[has(self.inCluster) && self.inCluster, has(self.kubeConfig), has(self.eks)].exists_one(x, x)',
      message: 'exactly one of inCluster: true, kubeConfig or eks must be set',
    }),
  )
  .describe('A target cluster.');

export const clusterStatusSchema = z
  .object({ conditions: conditionsList.optional() })
  .describe('Cluster status.');

export const gitRepositorySpecSchema = gitSourceSchema.describe(
  'A named Git location shared by Releases and values layers.',
);

const labelSelectorSchema = z
  .object({
    matchLabels: stringMap('Labels the Release must have.').optional(),
    matchExpressions: z
      .array(
        z.object({
          key: z.string(),
          operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
          values: z.array(z.string()).max(64).optional(),
        }),
      )
      .max(16)
      .optional(),
  })
  .describe('Selects Releases by label; empty selects all.');

const patchTargetSchema = z
  .object({
    group: z.string().max(253).optional(),
    version: z.string().max(63).optional(),
    kind: z.string().max(63).optional(),
    name: z.string().max(253).optional(),
    namespace: z.string().max(63).optional(),
    labelSelector: z.string().max(1024).optional().describe('k=v,k2=v2'),
  })
  .describe('Which rendered objects a patch applies to.');

export const mutationSpecSchema = z
  .object({
    releaseSelector: labelSelectorSchema.prefault({}),
    order: z
      .number()
      .int()
      .min(-100000)
      .max(100000)
      .default(100)
      .describe('Mutations apply in ascending order, then name.'),
    commonLabels: stringMap('Labels added to every rendered object.').optional(),
    commonAnnotations: stringMap('Annotations added to every rendered object.').optional(),
    images: z
      .array(
        z.object({
          name: z.string().min(1).describe('Image name to match (without tag).'),
          newName: z.string().optional(),
          newTag: z.string().optional(),
          digest: z.string().optional(),
        }),
      )
      .max(64)
      .optional(),
    patches: z
      .array(
        z.object({
          target: patchTargetSchema,
          type: z
            .enum(['JSON6902', 'Merge', 'StrategicMerge'])
            .describe('StrategicMerge is not implemented (Unsupported).'),
          patch: z
            .unknown()
            .meta(PRESERVE_UNKNOWN)
            .describe('A JSON6902 operation list, or a merge patch object.'),
        }),
      )
      .max(64)
      .optional(),
  })
  .describe('Changes applied to renders after rendering.');

const hookSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .max(40)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: 'must be a DNS label' })
      .describe('Hook name; part of the Job name.'),
    phase: z.enum(['PreSync', 'PostSync']),
    onFailure: z.enum(['Fail', 'Ignore']).default('Fail'),
    timeout: duration('Longest run of the hook Job.').default('10m'),
    job: z
      .object({
        template: z.record(z.string(), z.unknown()).meta(PRESERVE_UNKNOWN).describe('A pod template.'),
        backoffLimit: z.number().int().min(0).max(100).default(0),
      })
      .describe('The Job to run.'),
  })
  .describe('A lifecycle hook.');

export const lifecycleSpecSchema = z
  .object({
    hooks: z
      .array(hookSchema)
      .max(32)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
      .describe('Hooks, run as Jobs on the target cluster.'),
  })
  .describe('Hooks that run around syncs.');

export type ClusterSpec = z.infer<typeof clusterSpecSchema>;
export type GitRepositorySpec = z.infer<typeof gitRepositorySpecSchema>;
export type MutationSpec = z.infer<typeof mutationSpecSchema>;
export type LifecycleSpec = z.infer<typeof lifecycleSpecSchema>;
export type LifecycleHook = z.infer<typeof hookSchema>;
