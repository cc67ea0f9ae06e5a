// The props of the Convoy construct (convoy-construct.ts): what a CDK user sets.
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as eks from 'aws-cdk-lib/aws-eks';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { QueueLoop } from '../domain/runtime/queue-message.ts';
import type { EksTargetsProps } from './function-access.ts';
import type { ConvoyNotificationsProps } from './notifications.ts';
import type { RelayImage } from './relay-image.ts';
import type { TenancyManifestOptions } from './relay-manifests.ts';

/**
 * The functions' memory (MB) by default, the one copy (the construct and bench/lib/cost-model.ts
 * read it). From the bench's lambdaRuntime section (bench/RESULTS.md, two runs under the Lambda
 * runtime emulator): the node process's max RSS was drift 110–112 MB and health 125–127 MB, so
 * 256 MB leaves about 2×; reconcile's node process peaked at 132–139 MB, but helm and kubectl run as
 * its children and large charts render in it, which the bench did not measure: it stays at 1024.
 * (Lambda's CPU share grows with memory: a lower setting can also lengthen a run.)
 * fleet (the ReleaseSet loop) starts at the observers' 256 MB: it reads Releases,
 * Clusters and its set, resolves the set's template source (a Git fetch or a chart index) and
 * writes Releases, but renders nothing; not measured yet (bench), raise it for very large sets.
 */
export const DEFAULT_MEMORY_MB: Readonly<Record<QueueLoop, number>> = {
  reconcile: 1024,
  drift: 256,
  health: 256,
  fleet: 256,
};

/**
 * Records per invocation of the fleet function by default: one ReleaseSet per run, so each set
 * gets the whole timeout and memory (a set's run lists its namespace's Releases and Clusters and
 * may write many children), and one slow set never holds another's invocation. Set messages are
 * few next to Release messages, so the extra invocations cost little (docs/fleet.md, "On AWS").
 */
export const DEFAULT_FLEET_BATCH_SIZE = 1;

export interface ConvoyRetentionProps {
  /**
   * Backstop: an S3 lifecycle rule that expires every render object older than
   * this. Off by default, because it can delete renders the store protects
   * (lastSuccessful, lastHealthy, a rollout or a pin): the store keeps an
   * unchanged render's first write time, so the render of a Release that has
   * not changed for this long is expired too and drift/health/pin lose it.
   * Set it well above every Release's `spec.retentionPolicy.maxAge` (default 720h).
   */
  readonly expireRendersAfter?: Duration;
}

export interface ConvoyProps {
  /**
   * Name of the EKS management cluster. When set, an EKS Pod Identity
   * association binds the relay role to the relay ServiceAccount
   * (installationNamespace/convoy-relay), and the role's trust policy accepts
   * only that cluster. Without it, create the association (or IRSA) yourself.
   */
  readonly managementClusterName?: string;
  /**
   * Secrets Manager secret whose SecretString is the management cluster's kubeconfig YAML, for a
   * management cluster the construct cannot reach through EKS access (`cluster`). The functions
   * get its ARN (never its value) and read it at run time, re-reading its token every 5 minutes,
   * so a rotation needs no redeploy (infra/function-access.ts). Give none of cluster, this or
   * kubeconfigPath and the functions have no way to reach the management cluster (a synth warning says so).
   */
  readonly kubeconfigSecret?: secretsmanager.ISecret;
  /** The installation's tenancy settings (docs/security.md); default: defaultServiceAccount "default", inCluster only in the installation namespace, no cross-namespace references. */
  readonly tenancy?: TenancyManifestOptions;
  /**
   * What the functions' outbound requests (Git, Helm, OCI and ECR, notification webhooks) may reach
   * beyond public addresses (CONVOY_EGRESS_ALLOW; docs/security.md, the egress policy): CIDRs
   * (`10.0.0.0/8`), `IP[:port]`, `[IPv6]:port`, `host[:port]` or `*.domain` entries. Default none:
   * public addresses only. When given (even `[]`), it replaces `tenancy.egressAllow` (the same
   * setting as one comma-separated string, still read when this is not given). A malformed entry
   * fails synth, naming it.
   */
  readonly egressAllow?: readonly string[];
  /**
   * ECR repositories Releases with `provider: aws` may pull from (docs/oci-sources.md): repository
   * names (in the stack's account and region) or repository ARNs. The reconcile function's role gets
   * ecr:GetAuthorizationToken and ecr:BatchGetImage/GetDownloadUrlForLayer on exactly these; no
   * wildcards. Default none: `provider: aws` is refused by ECR (403).
   */
  readonly ecrRepositories?: readonly string[];
  /** EKS target clusters (Clusters with spec.eks): what the functions may describe and which roles they may assume. */
  readonly eksTargets?: EksTargetsProps;
  /** Path of a kubeconfig inside the function (e.g. from a layer of your own): CONVOY_KUBECONFIG_PATH. */
  readonly kubeconfigPath?: string;
  /** Namespace of the Leases and of the relay (CONVOY_NAMESPACE); default convoy-system. */
  readonly installationNamespace?: string;
  /**
   * Timeout of all four functions; default 5 min (a run renders and applies one wave; waits are
   * rechecks, not held in a run). At most queueVisibilityTimeout / 6 (domain/runtime/timings.ts).
   */
  readonly functionTimeout?: Duration;
  /**
   * Visibility timeout of the four queues: how long a batch whose invocation failed or timed out
   * stays hidden before it is retried. Default 6 × functionTimeout, as AWS advises for an SQS event
   * source mapping; a value below that, or not above functionTimeout + the 60-s Lease, fails synth.
   */
  readonly queueVisibilityTimeout?: Duration;
  /**
   * The longest waveTimeout, clusterWaveTimeout or hook timeout a Release of this installation
   * sets; default 30 min (clusterWaveTimeout's default). Such a wait is rechecked every 10 s, each
   * recheck a receive, so maxReceiveCount must cover it (checked at synth).
   */
  readonly maxWaveTimeout?: Duration;
  /**
   * Maximum concurrent invocations per event source mapping (2–1000), one number for all
   * four or one per loop (reconcile, drift, health, fleet); default 10 each. The design limit is
   * the management cluster's API server, not Lambda: raise with care.
   */
  readonly maxConcurrency?: number | Partial<Record<QueueLoop, number>>;
  /**
   * Records per invocation of the fleet function (ReleaseSet messages), 1–10; default 1
   * (DEFAULT_FLEET_BATCH_SIZE: each set gets a whole run). The other three take batches of 10.
   */
  readonly fleetBatchSize?: number;
  /** Receives before a message moves to its dead-letter queue; default maxWaveTimeout / 10 s + 10 (190), at most 1000. */
  readonly maxReceiveCount?: number;
  /** Render-store lifecycle backstop; retention itself is per Release (spec.retentionPolicy), done by the functions. */
  readonly retention?: ConvoyRetentionProps;
  /** Alarm and OK actions of every alarm go here. */
  readonly alarmsTopic?: sns.ITopic;
  /** Alarm when a queue's oldest message is older than this; default 15 min. */
  readonly queueAgeAlarmThreshold?: Duration;
  /** Entry file per loop; default functions/<loop>/handler.ts of this repository. */
  readonly entries?: Partial<Record<QueueLoop, string>>;
  /** Memory per loop in MB; defaults DEFAULT_MEMORY_MB: reconcile 1024 (helm, kustomize), drift 256, health 256, fleet 256. */
  readonly memorySize?: Partial<Record<QueueLoop, number>>;
  /**
   * Objects one render may hold (the reconcile function's CONVOY_MAX_RENDER_OBJECTS); a larger
   * render ends Applied False/DeployFailed at Rendering, naming the limit, with nothing applied.
   * Default 10,000 (domain/reconcile/render-limits.ts: bench largeRelease applies that many well
   * inside 1024 MB and 5 min). Raise it together with memorySize.reconcile and functionTimeout.
   */
  readonly maxRenderObjects?: number;
  /**
   * Bytes of render output one render may produce (helm/kubectl stdout, the manifest files of a
   * folder together; CONVOY_MAX_RENDER_BYTES); more ends the render at Rendering before it is
   * parsed. Default 32 MiB: parsing 64 MiB took 416–594 MB by itself (docs/decisions.md).
   */
  readonly maxRenderBytes?: number;
  /**
   * Largest content layer of a spec.source.oci artifact, in bytes (CONVOY_OCI_MAX_ARTIFACT_BYTES),
   * checked against the artifact's manifest before anything is downloaded; a larger layer ends
   * Applied False naming the limit. Default 64 MiB (docs/oci-sources.md).
   */
  readonly maxOciArtifactBytes?: number;
  /** CONVOY_LOG_LEVEL of the functions and the relay; default info. */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /**
   * The relay's container image: a URI (or `RelayImage.fromUri`) you publish — `npm run image`
   * builds it without Docker — or `RelayImage.fromDockerfile()`, a DockerImageAsset CDK builds from
   * image/Dockerfile at deploy time (needs Docker there). Without it the relay Deployment names
   * RELAY_IMAGE_PLACEHOLDER, which the kubelet refuses (InvalidImageName): the image is not published.
   */
  readonly relayImage?: string | RelayImage;
  /**
   * The EKS management cluster. The relay manifests (CRDs, RBAC, Deployment…) are installed on it
   * (`cluster.addManifest`, so an imported cluster needs its kubectl role and layer), and the
   * relay's Pod Identity association is created. Replaces managementClusterName.
   */
  readonly cluster?: eks.ICluster;
  /** Run the functions in this VPC (e.g. to reach a private EKS endpoint); they need a route to SQS, S3, STS and Secrets Manager (the hint key, read at init). */
  readonly vpc?: ec2.IVpc;
  /** Subnets of the functions in `vpc`; default the VPC's private subnets. */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** Security groups of the functions in `vpc`; default one that allows all outbound traffic. */
  readonly securityGroups?: ec2.ISecurityGroup[];
  /**
   * Server access logs of the render store go to this bucket (prefix `convoy-render-store/`).
   * Default none: the functions and the relay are the only writers and readers, and CloudTrail
   * data events are the audit trail to turn on if you need one (the choice is acknowledged to cdk-nag).
   */
  readonly serverAccessLogsBucket?: s3.IBucket;
  /** Bucket and KMS key removal policy; default RETAIN (renders are state). */
  readonly removalPolicy?: RemovalPolicy;
  /** CloudFormation outputs (queue URLs, bucket, relay role, relay manifests); default true. */
  readonly outputs?: boolean;
  /**
   * The EventBridge bus of notifications (infra/notifications.ts, docs/notifications.md): `{}`
   * creates one, `busName` names an existing one, `eventBus` gives one; the functions may
   * `events:PutEvents` on that bus only. Default: no bus, no grant.
   */
  readonly notifications?: ConvoyNotificationsProps;
}

/**
 * The props with `egressAllow` folded into `tenancy.egressAllow`, where every install path reads the
 * setting (installation-settings.ts): the top-level list, when given, replaces the tenancy string.
 */
export function withEgressAllow(props: ConvoyProps): ConvoyProps {
  if (props.egressAllow === undefined) return props;
  return { ...props, tenancy: { ...props.tenancy, egressAllow: props.egressAllow.join(',') } };
}
