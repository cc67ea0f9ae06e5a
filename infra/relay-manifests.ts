/**
 * The relay's Kubernetes manifests: CRDs, Namespace, ServiceAccount, RBAC,
 * Deployment and Service. Pure: the caller passes every value (queue URLs,
 * bucket, region), which may be CDK tokens — `Stack.toJsonString` resolves
 * them at deploy time, and `eks.Cluster.addManifest` accepts them as they are.
 *
 * RBAC is exactly what relay/ calls on the management cluster:
 * - relay/relay.ts lists and watches Release, Cluster, Mutation, Lifecycle and
 *   GitRepository in every namespace, and ConfigMaps/Secrets labelled
 *   `convoy.dev/watch: "true"` (RBAC cannot restrict by label, so list/watch
 *   on all ConfigMaps and Secrets is granted; the relay reads only labelled ones);
 * - relay/http/release-api.ts gets and merge-patches Releases (sync, pin annotations);
 * - relay/http/auth.ts creates TokenReviews and SubjectAccessReviews;
 * - relay/leader.ts reads, creates and updates its leader Lease, and
 *   adapters/kube/lease.ts deletes a deleted Release's Leases with a
 *   deletecollection — both only in the installation namespace (a Role, not a ClusterRole).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';

/** A Kubernetes object as plain JSON; values may hold CDK tokens. */
export type KubeManifest = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown>;
};

export const RELAY_NAME = 'convoy-relay';
export const RELAY_SERVICE_ACCOUNT = 'convoy-relay';
export const DEFAULT_INSTALLATION_NAMESPACE = 'convoy-system';
/** The image must hold this repository (node_modules included) at /app and Node.js 24; nothing publishes one yet. */
export const DEFAULT_RELAY_IMAGE = 'convoy:0.1.0';
export const RELAY_HTTP_PORT = 8080;

/** config/crds of this repository. */
export const DEFAULT_CRD_DIR = fileURLToPath(new URL('../config/crds/', import.meta.url));

export class ManifestError extends Error {
  override name = 'ManifestError';
}

/** Reads every CustomResourceDefinition in `dir/*.yaml` (sorted by file name). */
export function loadCrds(dir: string = DEFAULT_CRD_DIR): KubeManifest[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort();
  if (files.length === 0) throw new ManifestError(`no CRD files (*.yaml) in ${dir}; run npm run gen:crds`);
  const crds: KubeManifest[] = [];
  for (const file of files) {
    const path = join(dir, file);
    for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
      if (doc.errors.length > 0)
        throw new ManifestError(
          `${path} is not valid YAML: ${doc.errors[0]?.message ?? ''}; run npm run gen:crds`,
        );
      const value: unknown = doc.toJS();
      if (value === null || value === undefined) continue;
      if (!isManifest(value) || value.kind !== 'CustomResourceDefinition') {
        throw new ManifestError(
          `${path} holds something other than a CustomResourceDefinition; config/crds holds only CRDs`,
        );
      }
      crds.push(value);
    }
  }
  return crds;
}

function isManifest(value: unknown): value is KubeManifest {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v['apiVersion'] === 'string' &&
    typeof v['kind'] === 'string' &&
    typeof v['metadata'] === 'object' &&
    v['metadata'] !== null
  );
}

export interface RelayManifestOptions {
  /** Queue URLs the relay sends to (CONVOY_*_QUEUE_URL). */
  readonly queueUrls: { readonly reconcile: string; readonly drift: string; readonly health: string };
  /** AWS region of the queues and the bucket (AWS_REGION). */
  readonly region: string;
  /** Render-store bucket, for GET …/renders and pin (CONVOY_RENDER_BUCKET); absent: no store. */
  readonly renderBucket?: string;
  /** Installation namespace (Leases, the relay itself); default convoy-system. */
  readonly namespace?: string;
  /** Default DEFAULT_RELAY_IMAGE. */
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
}

/**
 * Every object the relay needs, in apply order: CRDs, Namespace,
 * ServiceAccount, ClusterRole + Binding, Role + Binding (Leases), Deployment, Service.
 *
 * The Deployment runs `node relay/main.ts` from /app with the environment the
 * functions read (functions/runtime/config.ts) plus CONVOY_HTTP_HOST and
 * CONVOY_HTTP_PORT for the HTTP API (relay/http/serve.ts listens on loopback
 * unless told otherwise). relay/main.ts does not exist yet: this environment is
 * the contract it is to read. Nothing builds the image (DEFAULT_RELAY_IMAGE) yet either.
 */
export function relayManifests(options: RelayManifestOptions): KubeManifest[] {
  const namespace = options.namespace ?? DEFAULT_INSTALLATION_NAMESPACE;
  const labels = { 'app.kubernetes.io/name': RELAY_NAME, 'app.kubernetes.io/part-of': 'convoy' };
  const meta = (name: string, namespaced: boolean) => ({
    name,
    ...(namespaced ? { namespace } : {}),
    labels,
  });
  const crds = options.crds ?? loadCrds();

  const env: { name: string; value: string }[] = [
    { name: 'CONVOY_NAMESPACE', value: namespace },
    { name: 'CONVOY_RECONCILE_QUEUE_URL', value: options.queueUrls.reconcile },
    { name: 'CONVOY_DRIFT_QUEUE_URL', value: options.queueUrls.drift },
    { name: 'CONVOY_HEALTH_QUEUE_URL', value: options.queueUrls.health },
    ...(options.renderBucket === undefined
      ? []
      : [{ name: 'CONVOY_RENDER_BUCKET', value: options.renderBucket }]),
    { name: 'AWS_REGION', value: options.region },
    { name: 'CONVOY_LOG_LEVEL', value: options.logLevel ?? 'info' },
    { name: 'CONVOY_HTTP_HOST', value: '0.0.0.0' },
    { name: 'CONVOY_HTTP_PORT', value: String(RELAY_HTTP_PORT) },
  ];

  const podLabels = { 'app.kubernetes.io/name': RELAY_NAME };
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
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(RELAY_NAME, false),
      rules: [
        { apiGroups: ['convoy.dev'], resources: ['releases'], verbs: ['get', 'list', 'watch', 'patch'] },
        {
          apiGroups: ['convoy.dev'],
          resources: ['clusters', 'mutations', 'lifecycles', 'gitrepositories'],
          verbs: ['list', 'watch'],
        },
        { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['list', 'watch'] },
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: meta(RELAY_NAME, false),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: RELAY_NAME },
      subjects: [{ kind: 'ServiceAccount', name: RELAY_SERVICE_ACCOUNT, namespace }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(RELAY_NAME, true),
      rules: [
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          verbs: ['get', 'create', 'update', 'deletecollection'],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(RELAY_NAME, true),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: RELAY_NAME },
      subjects: [{ kind: 'ServiceAccount', name: RELAY_SERVICE_ACCOUNT, namespace }],
    },
    {
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
                image: options.image ?? DEFAULT_RELAY_IMAGE,
                workingDir: '/app',
                command: ['node', 'relay/main.ts'],
                env,
                ports: [{ name: 'http', containerPort: RELAY_HTTP_PORT, protocol: 'TCP' }],
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
                volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
              },
            ],
            volumes: [{ name: 'tmp', emptyDir: {} }],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(RELAY_NAME, true),
      spec: { selector: podLabels, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] },
    },
  ];
}

/** Multi-document YAML for `kubectl apply -f -`. Use only on manifests without unresolved CDK tokens. */
export function manifestsToYaml(manifests: readonly KubeManifest[]): string {
  return manifests.map((m) => stringify(m, { lineWidth: 0 })).join('---\n');
}
