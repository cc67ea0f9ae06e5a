/**
 * The relay's Kubernetes manifests: CRDs, Namespace, ServiceAccount, RBAC, the relay's
 * configuration (a ConfigMap), Deployment, PodDisruptionBudget, NetworkPolicy and Service.
 * The one source of every install path: the Convoy construct applies them, and
 * scripts/gen-deploy.ts writes deploy/ and charts/convoy from them (a unit test fails
 * when those drift). Pure: the caller passes every value (queue URLs,
 * bucket, region), which may be CDK tokens — `Stack.toJsonString` resolves
 * them at deploy time, and `eks.Cluster.addManifest` accepts them as they are.
 *
 * RBAC is exactly what relay/ calls on the management cluster (proven with the
 * ServiceAccount's own token in test/integration/tenancy-relay.test.ts):
 * - relay/relay.ts lists and watches Release, Cluster, Mutation, Lifecycle and
 *   GitRepository in every namespace, and — as metadata only
 *   (relay/watch/metadata-only.ts) — ConfigMaps and Secrets labelled
 *   `convoy.dev/watch: "true"`. RBAC can restrict neither by label nor to metadata, so
 *   list/watch on ConfigMaps is granted and `get` is not — the token itself may list every
 *   ConfigMap with its data; the relay's code never asks for it (docs/security.md, "The
 *   identities"); Secrets only with `watchSecrets: true` (off by default: a list of Secrets
 *   returns their data, so the relay's identity reads none);
 * - relay/http/release-api.ts gets and lists Releases; its writes (sync, pin, suspend) go with
 *   the caller's own token, so the relay may not patch or update a Release;
 *   relay/http/git-hooks.ts lists Releases;
 * - relay/http/auth.ts creates TokenReviews and SubjectAccessReviews;
 * - relay/leader.ts reads, creates and updates its leader Lease, and
 *   adapters/kube/lease.ts lists the per-Release Leases (the sweep of deleted Releases) and
 *   deletes them with a deletecollection — only in the installation namespace (a Role).
 *
 * The functions' identity: functions-rbac.ts (impersonation only in the tenant namespaces), and
 * functions-admission.ts (their Release writes: ReleaseSet children only).
 * The installation's settings (tenancy, watchSecrets): installation-settings.ts, written to the
 * relay's ConfigMap, which `convoy dev` reads back for its in-process functions.
 */
import { stringify } from 'yaml';
import { loadCrds } from './crd-files.ts';
import { functionsReleasePolicy } from './functions-admission.ts';
import { functionsRbac } from './functions-rbac.ts';
import { tenancyEnvironment, type TenancyManifestOptions } from './installation-settings.ts';
import type { KubeManifest } from './kube-manifest.ts';
import { relayRbac, type Meta } from './relay-rbac.ts';

export {
  FUNCTIONS_GROUP,
  FUNCTIONS_IMPERSONATE_ROLE,
  FUNCTIONS_ROLE_NAME,
  functionsRbac,
} from './functions-rbac.ts';
export {
  DEFAULT_SERVICE_ACCOUNT,
  ManifestError,
  SYSTEM_NAMESPACES,
  tenancyEnvironment,
  tenantNamespacesOf,
  type TenancyManifestOptions,
} from './installation-settings.ts';
export type { KubeManifest } from './kube-manifest.ts';
export { DEFAULT_CRD_DIR, loadCrds } from './crd-files.ts';

export const RELAY_NAME = 'convoy-relay';
export const RELAY_SERVICE_ACCOUNT = 'convoy-relay';
export const DEFAULT_INSTALLATION_NAMESPACE = 'convoy-system';
/**
 * The relay image: Node.js 24 and the compiled package at /app, entrypoint
 * `node /app/dist/relay/main.js`. It is not published: build it with image/Dockerfile or, without
 * Docker, `npm run image` (an OCI image layout); push it to a registry of yours and pass its URI
 * (`image`, `convoy install --print --image`, the chart's image.repository).
 *
 * Without one, the Deployment names this placeholder (deploy/convoy.yaml, a Convoy construct without
 * relayImage). It is not a valid image reference — a repository name must be lower case — so the
 * kubelet refuses it at once with InvalidImageName, quoting it, and pulls nothing from anywhere:
 * unlike the former `convoy-relay:0.1.0`, which sent every node to Docker Hub for an image that
 * does not exist there (and could one day be someone else's).
 */
export const RELAY_IMAGE_PLACEHOLDER = 'CHANGE-ME-build-and-push-the-convoy-relay-image';
/** The ConfigMap whose entries are the relay's environment (envFrom). */
export const RELAY_CONFIG_NAME = 'convoy-relay-config';
export const RELAY_HTTP_PORT = 8080;
/** The HTTPS port of the API and dashboard, served when the TLS Secret is mounted (relay/http/tls-files.ts). */
export const RELAY_HTTPS_PORT = 8443;
/** A kubernetes.io/tls Secret (e.g. from cert-manager) with the relay's serving certificate; optional. */
export const RELAY_TLS_SECRET = 'convoy-relay-tls';
const RELAY_TLS_DIR = '/etc/convoy/tls';

export interface RelayManifestOptions {
  /**
   * Queue URLs the relay sends to (CONVOY_*_QUEUE_URL). `fleet` (ReleaseSets) is
   * optional: without it the relay sends no ReleaseSet messages (the Convoy construct always sets it).
   */
  readonly queueUrls: {
    readonly reconcile: string;
    readonly drift: string;
    readonly health: string;
    readonly fleet?: string;
    /** The notify function's queue (Notifications); without it the relay does not watch Notifications. */
    readonly notify?: string;
  };
  /** AWS region of the queues and the bucket (AWS_REGION). */
  readonly region: string;
  /** Render-store bucket, for GET …/renders and pin (CONVOY_RENDER_BUCKET); absent: no store. */
  readonly renderBucket?: string;
  /** Installation namespace (Leases, the relay itself); default convoy-system. */
  readonly namespace?: string;
  /** The relay image; required in practice: without it the Deployment names RELAY_IMAGE_PLACEHOLDER. */
  readonly image?: string;
  readonly replicas?: number;
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /**
   * IAM role for IRSA: annotates the ServiceAccount with `eks.amazonaws.com/role-arn`.
   * Leave out with EKS Pod Identity (the association names the ServiceAccount instead).
   */
  readonly irsaRoleArn?: string;
  /** CRDs to include first; default loadCrds(). Pass [] to leave them out. */
  readonly crds?: readonly KubeManifest[];
  /** The installation's tenancy settings (docs/security.md); written to the ConfigMap as CONVOY_* entries. */
  readonly tenancy?: TenancyManifestOptions;
  /**
   * Watch labelled Secrets (as metadata, but RBAC's list/watch on Secrets returns their data to the
   * relay's identity). Default false: the relay may read no Secret, and a changed values or
   * credentials Secret is picked up by the Release's next interval or a sync (docs/decisions.md).
   */
  readonly watchSecrets?: boolean;
  /**
   * Serve per-Release and per-ReleaseSet series (their namespaces and names) on the relay's /metrics,
   * which needs no token. Default false: /metrics carries counts only, no tenant's names.
   */
  readonly metricsPerRelease?: boolean;
  /** A ServiceAccount of the installation namespace bound like FUNCTIONS_GROUP (functions-rbac.ts); for `convoy dev` only. */
  readonly functionsServiceAccount?: string;
}

/**
 * Every object the relay needs, in apply order: CRDs, Namespace, ServiceAccount,
 * ClusterRole + Binding, Role + Binding (Leases), ConfigMap, Deployment,
 * PodDisruptionBudget, NetworkPolicy, Service.
 *
 * The Deployment runs the image's entrypoint (relay/main.ts, compiled to
 * dist/relay/main.js), which validates its environment at start and names a missing or
 * malformed variable. The ConfigMap holds that environment: the queue URLs, region and
 * bucket the functions also read (functions/runtime/config.ts) plus CONVOY_HTTP_HOST and
 * CONVOY_HTTP_PORT for the HTTP API (relay/http/serve.ts listens on loopback unless told
 * otherwise).
 */
export function relayManifests(options: RelayManifestOptions): KubeManifest[] {
  const namespace = options.namespace ?? DEFAULT_INSTALLATION_NAMESPACE;
  const labels = { 'app.kubernetes.io/name': RELAY_NAME, 'app.kubernetes.io/part-of': 'convoy' };
  const meta: Meta = (name, namespaced) => ({
    name,
    ...(namespaced ? { namespace } : {}),
    labels,
  });
  const crds = options.crds ?? loadCrds();
  const podLabels = { 'app.kubernetes.io/name': RELAY_NAME };
  const config: KubeManifest = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(RELAY_CONFIG_NAME, true),
    data: Object.fromEntries(relayEnvironment(options, namespace).map((e) => [e.name, e.value])),
  };
  return [
    ...crds,
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, labels: { 'app.kubernetes.io/part-of': 'convoy' } },
    },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: {
        ...meta(RELAY_SERVICE_ACCOUNT, true),
        ...(options.irsaRoleArn === undefined
          ? {}
          : { annotations: { 'eks.amazonaws.com/role-arn': options.irsaRoleArn } }),
      },
    },
    ...relayRbac({
      watchSecrets: options.watchSecrets,
      namespace,
      meta,
      name: RELAY_NAME,
      serviceAccount: RELAY_SERVICE_ACCOUNT,
    }),
    ...functionsRbac(namespace, labels, options.tenancy, options.functionsServiceAccount),
    // What RBAC cannot say: the functions write only the child Releases of a ReleaseSet.
    ...functionsReleasePolicy(namespace, labels, options.functionsServiceAccount),
    config,
    relayDeployment(options, meta, { labels, podLabels }),
    ...relayNetworking(meta, podLabels),
  ];
}

/** The relay's environment, the entries of its ConfigMap: what the functions read too, its HTTP settings, the installation's settings. */
function relayEnvironment(
  options: RelayManifestOptions,
  namespace: string,
): { name: string; value: string }[] {
  return [
    { name: 'CONVOY_NAMESPACE', value: namespace },
    { name: 'CONVOY_RECONCILE_QUEUE_URL', value: options.queueUrls.reconcile },
    { name: 'CONVOY_DRIFT_QUEUE_URL', value: options.queueUrls.drift },
    { name: 'CONVOY_HEALTH_QUEUE_URL', value: options.queueUrls.health },
    ...(options.queueUrls.fleet === undefined
      ? []
      : [{ name: 'CONVOY_FLEET_QUEUE_URL', value: options.queueUrls.fleet }]),
    ...(options.queueUrls.notify === undefined
      ? []
      : [{ name: 'CONVOY_NOTIFY_QUEUE_URL', value: options.queueUrls.notify }]),
    ...(options.renderBucket === undefined
      ? []
      : [{ name: 'CONVOY_RENDER_BUCKET', value: options.renderBucket }]),
    { name: 'AWS_REGION', value: options.region },
    { name: 'CONVOY_LOG_LEVEL', value: options.logLevel ?? 'info' },
    { name: 'CONVOY_HTTP_HOST', value: '0.0.0.0' },
    { name: 'CONVOY_HTTP_PORT', value: String(RELAY_HTTP_PORT) },
    { name: 'CONVOY_HTTPS_PORT', value: String(RELAY_HTTPS_PORT) },
    { name: 'CONVOY_TLS_CERT_FILE', value: `${RELAY_TLS_DIR}/tls.crt` },
    { name: 'CONVOY_TLS_KEY_FILE', value: `${RELAY_TLS_DIR}/tls.key` },
    { name: 'CONVOY_WATCH_SECRETS', value: String(options.watchSecrets ?? false) },
    { name: 'CONVOY_METRICS_PER_RELEASE', value: String(options.metricsPerRelease ?? false) },
    ...tenancyEnvironment(options.tenancy, namespace),
  ];
}

/** The relay's Deployment: non-root, read-only, spread over nodes, its settings from the ConfigMap, the TLS Secret optional. */
function relayDeployment(
  options: RelayManifestOptions,
  meta: Meta,
  { labels, podLabels }: { labels: Record<string, string>; podLabels: Record<string, string> },
): KubeManifest {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(RELAY_NAME, true),
    spec: {
      // Two replicas, one leader (relay/leader.ts); the follower serves the HTTP API too.
      replicas: options.replicas ?? 2,
      selector: { matchLabels: podLabels },
      template: {
        metadata: { labels: { ...labels, ...podLabels } },
        spec: {
          serviceAccountName: RELAY_SERVICE_ACCOUNT,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            runAsGroup: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: { matchLabels: podLabels },
            },
          ],
          containers: [
            {
              name: 'relay',
              image: options.image ?? RELAY_IMAGE_PLACEHOLDER,
              envFrom: [{ configMapRef: { name: RELAY_CONFIG_NAME } }],
              // http: probes and metrics (and the API when no TLS Secret is mounted); https: the API and dashboard.
              ports: [
                { name: 'http', containerPort: RELAY_HTTP_PORT, protocol: 'TCP' },
                { name: 'https', containerPort: RELAY_HTTPS_PORT, protocol: 'TCP' },
              ],
              readinessProbe: { httpGet: { path: '/readyz', port: 'http' }, periodSeconds: 5 },
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'http' },
                periodSeconds: 10,
                failureThreshold: 3,
              },
              resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '512Mi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'tmp', mountPath: '/tmp' },
                { name: 'tls', mountPath: RELAY_TLS_DIR, readOnly: true },
              ],
            },
          ],
          // The TLS Secret is optional: without it the relay starts, serves plain HTTP and logs why.
          volumes: [
            { name: 'tmp', emptyDir: {} },
            { name: 'tls', secret: { secretName: RELAY_TLS_SECRET, optional: true } },
          ],
        },
      },
    },
  };
}

/** What keeps the relay reachable: its PodDisruptionBudget, its NetworkPolicy (inbound: its two ports only) and its Service. */
function relayNetworking(meta: Meta, podLabels: Record<string, string>): KubeManifest[] {
  return [
    {
      // One replica may go during a node drain; the other keeps the HTTP API and takes the lead.
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: meta(RELAY_NAME, true),
      spec: { minAvailable: 1, selector: { matchLabels: podLabels } },
    },
    {
      // Inbound: only the relay's two ports (API, dashboard, webhooks, /metrics, probes). Outbound stays open:
      // the relay reaches the apiserver and the AWS endpoints, whose addresses are not known here.
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: meta(RELAY_NAME, true),
      spec: {
        podSelector: { matchLabels: podLabels },
        policyTypes: ['Ingress'],
        ingress: [
          {
            ports: [
              { protocol: 'TCP', port: RELAY_HTTP_PORT },
              { protocol: 'TCP', port: RELAY_HTTPS_PORT },
            ],
          },
        ],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(RELAY_NAME, true),
      spec: {
        selector: podLabels,
        ports: [
          { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
          { name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' },
        ],
      },
    },
  ];
}

/** Multi-document YAML for `kubectl apply -f -`. Use only on manifests without unresolved CDK tokens. */
export function manifestsToYaml(manifests: readonly KubeManifest[]): string {
  return manifests.map((m) => stringify(m, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
}
