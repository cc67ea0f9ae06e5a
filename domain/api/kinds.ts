import { z } from 'zod';
import { GROUP_VERSION, conditionsList, type CelRule } from './common.ts';
import { noSelfDependency } from './depends-on.ts';
import { releaseSpecSchema } from './release-spec.ts';
import { releaseStatusSchema } from './release-status.ts';
import {
  clusterSpecSchema,
  clusterStatusSchema,
  gitRepositorySpecSchema,
  lifecycleSpecSchema,
  mutationSpecSchema,
} from './other-kinds.ts';
import { releaseSetSpecSchema, releaseSetStatusSchema } from './release-set.ts';
import { notificationSpecSchema, notificationStatusSchema } from './notification.ts';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'date' | 'boolean' | 'number';
  jsonPath: string;
  description?: string;
  priority?: number;
}

export interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  spec: z.ZodType;
  status?: z.ZodType;
  printerColumns: PrinterColumn[];
  /** CEL rules over the whole object (CEL sees metadata.name there, not the namespace). */
  rootRules?: CelRule[];
}

const conditionColumn = (type: string): PrinterColumn => ({
  name: type,
  type: 'string',
  jsonPath: `.status.conditions[?(@.type=="${type}")].status`,
  description: `Status of the ${type} condition.`,
});
const ageColumn: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

const minimalStatus = z.object({ conditions: conditionsList.optional() });

/** Every convoy kind: the single source of the TypeScript types and of the CRDs. */
export const kinds: readonly KindDefinition[] = [
  {
    kind: 'Release',
    plural: 'releases',
    singular: 'release',
    shortNames: ['rel'],
    description: 'A Release renders a source and delivers it to a target Cluster.',
    spec: releaseSpecSchema,
    status: releaseStatusSchema,
    rootRules: [noSelfDependency],
    printerColumns: [
      { name: 'State', type: 'string', jsonPath: '.status.rollout.state', description: 'The rollout state.' },
      conditionColumn('Applied'),
      conditionColumn('InSync'),
      conditionColumn('Healthy'),
      ageColumn,
    ],
  },
  {
    kind: 'Cluster',
    plural: 'clusters',
    singular: 'cluster',
    shortNames: [],
    description: 'A Cluster is a target that Releases deliver to.',
    spec: clusterSpecSchema,
    status: clusterStatusSchema,
    printerColumns: [ageColumn],
  },
  {
    kind: 'GitRepository',
    plural: 'gitrepositories',
    singular: 'gitrepository',
    shortNames: ['gitrepo'],
    description: 'A named Git location, shared by Releases and Helm values layers.',
    spec: gitRepositorySpecSchema,
    status: minimalStatus,
    printerColumns: [{ name: 'URL', type: 'string', jsonPath: '.spec.url' }, ageColumn],
  },
  {
    kind: 'Mutation',
    plural: 'mutations',
    singular: 'mutation',
    shortNames: [],
    description: 'Changes applied to the renders of the Releases it selects.',
    spec: mutationSpecSchema,
    printerColumns: [{ name: 'Order', type: 'integer', jsonPath: '.spec.order' }, ageColumn],
  },
  {
    kind: 'Lifecycle',
    plural: 'lifecycles',
    singular: 'lifecycle',
    shortNames: [],
    description: 'Hooks that run as Jobs before and after a Release syncs.',
    spec: lifecycleSpecSchema,
    status: minimalStatus,
    printerColumns: [ageColumn],
  },
  {
    kind: 'ReleaseSet',
    plural: 'releasesets',
    singular: 'releaseset',
    shortNames: ['rset'],
    description: 'A ReleaseSet rolls one Release declaration out to many Clusters, step by step.',
    spec: releaseSetSpecSchema,
    status: releaseSetStatusSchema,
    printerColumns: [
      { name: 'State', type: 'string', jsonPath: '.status.rollout.state', description: 'The rollout state.' },
      {
        name: 'Step',
        type: 'string',
        jsonPath: '.status.rollout.stepName',
        description: 'The current step.',
      },
      {
        name: 'Clusters',
        type: 'integer',
        jsonPath: '.status.clusters.selected',
        description: 'Clusters selected.',
      },
      {
        name: 'Ready',
        type: 'integer',
        jsonPath: '.status.clusters.ready',
        description: 'Children at the revision and ready.',
      },
      conditionColumn('Generated'),
      conditionColumn('RolloutSucceeded'),
      ageColumn,
    ],
  },
  {
    kind: 'Notification',
    plural: 'notifications',
    singular: 'notification',
    shortNames: ['notif'],
    description:
      'A Notification tells destinations (EventBridge, webhooks, Slack, commit statuses) when the verdict of a Release or ReleaseSet changes, exactly once.',
    spec: notificationSpecSchema,
    status: notificationStatusSchema,
    printerColumns: [conditionColumn('Delivering'), ageColumn],
  },
];

export const apiVersion = GROUP_VERSION;
