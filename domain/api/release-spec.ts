import { z } from 'zod';
import {
  PRESERVE_UNKNOWN,
  celRules,
  duration,
  exactlyOneOf,
  localObjectReference,
  namespacedObjectReference,
  referenceNamespace,
  objectName,
  relativePath,
} from './common.ts';
import { gitRefSchema, gitSourceSchema } from './git-ref.ts';
import { OCI_DIGEST_PATTERN, OCI_NAME_COMPONENT, OCI_URL_PATTERN } from '../source/oci.ts';
import { OCI_ARTIFACT_URL_PATTERN } from '../source/oci-artifact.ts';
import { ociRegistryFields, ociRegistryRules } from './oci-options.ts';
import { dependencyPolicySchema, dependsOnSchema } from './depends-on.ts';

const gitReleaseSourceSchema = gitSourceSchema
  .extend({
    path: relativePath('Folder inside the repository to render. Relative, no "..".').default('.'),
  })
  .describe('Render from a Git repository.');

const helmSourceSchema = z
  .object({
    repository: z
      .string()
      .min(1)
      .max(2048)
      .describe(
        'An index.yaml chart repository URL (http or https), or an OCI registry location oci://<host[:port]>/<path> (the chart is <path>/<chart> there).',
      ),
    chart: z.string().min(1).max(253).describe('Name of the chart in the repository.'),
    version: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe(
        'An exact chart version or a semver range such as 6.7.x; the highest match is used. Absent: the highest stable version (for OCI, the highest semver tag).',
      ),
    digest: z
      .string()
      .regex(new RegExp(OCI_DIGEST_PATTERN), { message: 'must be sha256:<64 lower-case hex digits>' })
      .optional()
      .describe(
        'OCI only, instead of version: the sha256 digest of the chart manifest (what helm push prints as Digest).',
      ),
    insecure: z
      .boolean()
      .optional()
      .describe(
        'OCI only: reach the registry over plain HTTP. Refused unless the installation allows the registry (CONVOY_INSECURE_REGISTRIES).',
      ),
    secretRef: localObjectReference(
      'A Secret with username and password (or bearerToken for index.yaml repositories), or of type kubernetes.io/dockerconfigjson for an OCI registry.',
    ).optional(),
    ...ociRegistryFields,
  })
  .meta(
    celRules(
      {
        rule: `!self.repository.startsWith('oci://') || self.repository.matches('${OCI_URL_PATTERN.replace(/\\/g, '\\\\')}')`,
        message:
          'an oci:// repository must be oci://<host[:port]>/<lower-case path>, without credentials, query, tag or digest',
      },
      {
        rule: `!self.repository.startsWith('oci://') || self.chart.matches('^${OCI_NAME_COMPONENT}$')`,
        message: 'an OCI chart name must be lower-case letters, digits and . _ - separators',
      },
      {
        rule: "!has(self.digest) || self.repository.startsWith('oci://')",
        message: 'digest is only allowed with an oci:// repository',
      },
      {
        rule: "!has(self.insecure) || self.repository.startsWith('oci://')",
        message: 'insecure is only allowed with an oci:// repository',
      },
      { rule: '!(has(self.digest) && has(self.version))', message: 'set version or digest, not both' },
      ...ociRegistryRules('repository', { ociOnly: true }),
    ),
  )
  .describe('Render a chart from a Helm repository or an OCI registry.');

const ociSourceSchema = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2048)
      .describe(
        'The artifact repository: oci://<registry host[:port]>/<repository> (what flux push artifact and oras push were given, without the tag).',
      ),
    ref: z
      .object({
        tag: z
          .string()
          .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, { message: 'must be an OCI tag' })
          .optional()
          .describe('Follow this tag: the digest it names is read at every reconcile (one manifest HEAD).'),
        semver: z
          .string()
          .min(1)
          .max(255)
          .optional()
          .describe(
            'A semver range over the tags; the highest match is used (tags that are not semver are ignored).',
          ),
        digest: z
          .string()
          .regex(new RegExp(OCI_DIGEST_PATTERN), { message: 'must be sha256:<64 lower-case hex digits>' })
          .optional()
          .describe('This exact artifact: the sha256 digest of its manifest.'),
      })
      .meta(celRules(exactlyOneOf(['tag', 'semver', 'digest'])))
      .describe('Which artifact: exactly one of tag, semver or digest.'),
    path: relativePath('Folder inside the artifact to render. Relative, no "..".').default('.'),
    layerSelector: z
      .object({
        mediaType: z
          .string()
          .min(1)
          .max(255)
          .optional()
          .describe(
            'The media type of the layer holding the content. Default: the first application/vnd.cncf.flux.content.v1.tar+gzip layer (flux push artifact), else the first application/vnd.oci.image.layer.v1.tar+gzip layer (oras push of a folder).',
          ),
        operation: z
          .enum(['extract', 'copy'])
          .default('extract')
          .describe(
            'extract: the layer is a tar+gzip unpacked into the folder. copy: the layer is one file, written under its org.opencontainers.image.title annotation.',
          ),
      })
      .optional()
      .describe('Which layer of the artifact is the content, and how it becomes files.'),
    insecure: z
      .boolean()
      .optional()
      .describe(
        'Reach the registry over plain HTTP. Refused unless the installation allows the registry (CONVOY_INSECURE_REGISTRIES).',
      ),
    secretRef: localObjectReference(
      'A Secret with username and password, or of type kubernetes.io/dockerconfigjson.',
    ).optional(),
    ...ociRegistryFields,
  })
  .meta(
    celRules(
      {
        rule: `self.url.matches('${OCI_ARTIFACT_URL_PATTERN.replace(/\\/g, '\\\\')}')`,
        message:
          'url must be oci://<host[:port]>/<lower-case repository path>, without credentials, query, tag or digest',
      },
      ...ociRegistryRules('url', { ociOnly: false }),
    ),
  )
  .describe('Render from an OCI artifact (flux push artifact, oras push): manifests or a Kustomize folder.');

export const sourceSchema = z
  .object({
    git: gitReleaseSourceSchema.optional(),
    gitRepositoryRef: z
      .object({
        name: objectName('Name of a GitRepository.'),
        namespace: referenceNamespace,
        path: relativePath('Folder inside the repository to render. Relative, no "..".').default('.'),
      })
      .optional()
      .describe('Render from a GitRepository object.'),
    helm: helmSourceSchema.optional(),
    oci: ociSourceSchema.optional(),
  })
  .meta(celRules(exactlyOneOf(['git', 'gitRepositoryRef', 'helm', 'oci'])))
  .describe('Where the desired state comes from: exactly one of git, gitRepositoryRef, helm or oci.');

const valuesLayerSchema = z
  .object({
    kind: z.enum(['ConfigMap', 'Secret', 'GitRepository']).describe('Where the layer is read from.'),
    name: objectName('Name of the object.'),
    namespace: referenceNamespace,
    key: z.string().min(1).max(253).optional().describe('Key of a ConfigMap or Secret; default values.yaml.'),
    path: relativePath('File inside a GitRepository; required for kind GitRepository.').optional(),
    optional: z.boolean().default(false).describe('A missing optional layer is skipped instead of failing.'),
  })
  .meta(
    celRules({
      rule: "self.kind != 'GitRepository' || has(self.path)",
      message: 'path is required when kind is GitRepository',
    }),
  )
  .describe('One layer of Helm values.');

const helmContentSchema = z
  .object({
    releaseName: z.string().min(1).max(53).optional().describe('Helm release name; default metadata.name.'),
    dependencyMode: z
      .enum(['Vendored', 'Resolve'])
      .default('Vendored')
      .describe('Vendored: charts/ must hold the dependencies. Resolve is not implemented (Unsupported).'),
    values: z
      .record(z.string(), z.unknown())
      .optional()
      .meta(PRESERVE_UNKNOWN)
      .describe('Inline values, applied last.'),
    valuesFrom: z.array(valuesLayerSchema).max(32).optional().describe('Values layers in order; later wins.'),
  })
  .describe('Helm rendering options.');

export const contentSchema = z
  .object({
    type: z
      .enum(['Manifests', 'Kustomize', 'Helm', 'Jsonnet'])
      .default('Manifests')
      .describe('How the source is rendered. Jsonnet is not implemented (Unsupported).'),
    helm: helmContentSchema.optional(),
  })
  .meta(
    celRules({
      rule: "!has(self.helm) || self.type == 'Helm'",
      message: 'helm is only allowed with type Helm',
    }),
  )
  .describe('How the source is turned into Kubernetes objects.');

const retryBackoffSchema = z
  .object({
    initial: duration('First retry delay.'),
    factor: z.number().min(1).max(10).default(2).describe('Multiplier per attempt.'),
    max: duration('Longest retry delay.').default('10m'),
  })
  .describe(
    'Backoff for the stops convoy retries (SourceNotReady, ClusterNotReady, ValuesNotReady, DeployFailed, PruneFailed). ' +
      'Set: min(initial × factor^(attempt-1), max), followed exactly (no jitter). ' +
      'Absent (the default): initial 2s, factor 2, max 5m, with equal jitter (each delay d is drawn from [d/2, d]): ' +
      'the first retry after 1–2s, the eighth after 128–256s, every later one after 150–300s.',
  );

export const syncPolicySchema = z
  .object({
    mode: z
      .enum(['Automatic', 'Manual'])
      .default('Automatic')
      .describe('Manual: a changed render waits for a /sync request.'),
    interval: duration('Periodic reconcile interval.').default('5m'),
    retryBackoff: retryBackoffSchema.optional(),
    prune: z.boolean().default(true).describe('Delete objects that the render no longer contains.'),
    waveTimeout: duration('Longest wait for one sync wave to become healthy.').default('5m'),
    clusterWaveTimeout: duration('Longest wait for lower cluster waves.').default('30m'),
  })
  .describe('How and when convoy syncs.');

const healthCheckSchema = z
  .object({
    apiVersion: z.string().min(1).max(253).describe('apiVersion of the objects the check applies to.'),
    kind: z.string().min(1).max(63).describe('kind of the objects the check applies to.'),
    healthy: z
      .string()
      .min(1)
      .max(4096)
      .describe(
        'A CEL expression over `object` that is true when the object is healthy. Kubernetes CEL semantics: RE2 regular expressions, a cost budget per evaluation.',
      ),
  })
  .meta(
    celRules({
      rule: "!(self.apiVersion == 'v1' && self.kind == 'Secret')",
      message: 'checks on Secrets are not allowed: Secret data is never read; Secrets are always healthy',
    }),
  )
  .describe('A custom health rule.');

const ignoreRuleSchema = z
  .object({
    group: z.string().max(253).optional().describe('API group of the objects; empty matches any.'),
    kind: z.string().max(63).optional().describe('Kind of the objects; empty matches any.'),
    name: z.string().max(253).optional().describe('Name of the object; empty matches any.'),
    namespace: z.string().max(63).optional().describe('Namespace of the object; empty matches any.'),
    jsonPointers: z
      .array(
        z
          .string()
          .max(1024)
          .regex(/^(\/.*)?$/, { message: 'must be a JSON pointer starting with /' }),
      )
      .min(1)
      .max(64)
      .describe('JSON pointers (RFC 6901) of fields that may differ.'),
  })
  .describe('Fields that drift detection ignores.');

export const releaseSpecSchema = z
  .object({
    cluster: namespacedObjectReference('The target Cluster; by default in the same namespace.'),
    serviceAccountName: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { message: 'must be a DNS subdomain name' })
      .optional()
      .describe(
        'Everything convoy does on the target for this Release (dry run, apply, prune, hooks, drift and health reads) runs as ' +
          'system:serviceaccount:<release namespace>:<name>, impersonated on the management cluster; on a remote Cluster as ' +
          "the Cluster's own credentials. Empty: the installation's defaultServiceAccount.",
      ),
    clusterWave: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(0)
      .describe('Releases on the same Cluster sync in ascending cluster waves; wave 0 never waits.'),
    dependsOn: dependsOnSchema,
    dependencyPolicy: dependencyPolicySchema.optional(),
    targetNamespace: z
      .string()
      .max(63)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: 'must be a DNS label' })
      .optional()
      .describe('Namespace for namespaced objects that do not name one.'),
    suspend: z.boolean().default(false).describe('true: no reconcile; the observers keep observing.'),
    source: sourceSchema,
    content: contentSchema.prefault({}),
    lifecycleRef: localObjectReference(
      'A Lifecycle in the same namespace whose hooks run around syncs.',
    ).optional(),
    syncPolicy: syncPolicySchema.prefault({}),
    failurePolicy: z
      .object({
        rollback: z
          .enum(['OnWaveFailure', 'Never'])
          .default('OnWaveFailure')
          .describe('OnWaveFailure: re-apply the last healthy render when a wave times out.'),
      })
      .optional()
      .describe('What to do when a rollout fails. Its presence adds the RolloutSucceeded condition.'),
    healthAssessment: z
      .object({
        interval: duration('How often health is assessed.').default('1m'),
        progressDeadline: duration('Progressing longer than this counts as Degraded.').default('10m'),
        checks: z.array(healthCheckSchema).max(64).optional().describe('Custom health rules (CEL).'),
      })
      .optional()
      .describe('Health assessment. Absent: Healthy is True with reason NotConfigured.'),
    driftDetection: z
      .object({
        interval: duration('How often drift is checked.').default('5m'),
        mode: z
          .enum(['Detect', 'Correct'])
          .default('Detect')
          .describe('Correct re-applies the render when the cluster drifted.'),
        ignore: z.array(ignoreRuleSchema).max(64).optional(),
      })
      .prefault({})
      .describe('Drift detection.'),
    retentionPolicy: z
      .object({
        maxRenders: z.number().int().min(1).max(1000).optional().describe('Keep at most this many renders.'),
        maxAge: duration('Delete renders older than this.').optional(),
      })
      .optional()
      .describe('Render store retention, merged over the installation default.'),
  })
  .describe('The desired state of a Release.');

export type ReleaseSpec = z.infer<typeof releaseSpecSchema>;
export type GitRefSpec = z.infer<typeof gitRefSchema>;
