// A fleet for the ReleaseSet scenario tests: real target kube-apiservers (etcd,
// kube-apiserver, and — where pods must run — kube-controller-manager, kube-scheduler and KWOK's
// simulated nodes), one Cluster object per target in a management namespace (a kubeconfig Secret
// with a token user of the target), and a Helm chart in Git with revisions whose pod template
// fails on chosen rings: the ReleaseSet's template passes `ring: ${cluster.labels.ring}` as a
// value, so a revision fails exactly on the Clusters labelled with a failing ring (KWOK's failure
// stage, dev/control-plane/kwok-fail-stages.yaml: the Deployment never becomes available and the
// Deployment controller marks its progress deadline exceeded → the child's Healthy False/Degraded,
// a failure of its combined verdict).
//
// Nothing here decides anything: the tests create the ReleaseSet and wait for what the runtime does.
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1Deployment,
} from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { FAIL_LABEL, startControlPlane, type ControlPlane } from '../../dev/control-plane.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { parseRelease, type Release } from '../../domain/api/objects.ts';
import { parseReleaseSet, type ReleaseSet } from '../../domain/api/release-set.ts';
import { deploymentRolledOut } from './deployment-rollout.ts';
import { withSharedConnections } from '../../dev/kube-connections.ts';
import type { FixtureFiles } from './git-fixtures.ts';

/** The token user each target's kubeconfig Secret names; cluster-admin on its target (this harness proves rollouts, not target RBAC). */
export const TARGET_DEPLOYER = 'convoy-fleet-deployer';
/** The Deployment and ConfigMap the chart renders in each child's targetNamespace. */
export const APP_NAME = 'web';
/** Label every Cluster of the fleet carries, so a set can select the fleet and not the runtime env's `local` Cluster. */
export const FLEET_LABEL = 'fleet.convoy.test/member';

export interface TargetSpec {
  /** Cluster object name (and a label of the target). */
  readonly name: string;
  /** Labels of the Cluster object, e.g. {ring: 'canary'}. */
  readonly labels: Readonly<Record<string, string>>;
}

export interface FleetTarget extends TargetSpec {
  readonly cp: ControlPlane;
  /** Admin of the target (for the test's own reads; never what convoy acts as). */
  readonly kc: KubeConfig;
}

const kcOf = (cp: ControlPlane): KubeConfig => {
  const kc = new KubeConfig();
  kc.loadFromString(cp.kubeconfigYaml);
  return withSharedConnections(kc);
};

/**
 * Starts one control plane per spec, in parallel: with controllers and `nodes` KWOK nodes (default
 * 1) unless `controllers: false`. Each gets the TARGET_DEPLOYER token user, bound to cluster-admin.
 */
export async function startFleetTargets(
  specs: readonly TargetSpec[],
  options: { controllers?: boolean; nodes?: number } = {},
): Promise<FleetTarget[]> {
  const started = await Promise.allSettled(
    specs.map((spec) =>
      startControlPlane({
        controllers: options.controllers ?? true,
        nodes: options.nodes ?? 1,
        extraUsers: [{ name: TARGET_DEPLOYER }],
      }).then((cp) => ({ ...spec, cp, kc: kcOf(cp) })),
    ),
  );
  const targets = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failure = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure !== undefined) {
    await stopFleetTargets(targets);
    throw failure.reason;
  }
  for (const t of targets) {
    await t.kc.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
      body: {
        metadata: { name: TARGET_DEPLOYER },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'User', name: TARGET_DEPLOYER, apiGroup: 'rbac.authorization.k8s.io' }],
      },
    });
  }
  return targets;
}

export async function stopFleetTargets(targets: readonly FleetTarget[]): Promise<void> {
  await Promise.all(targets.map((t) => t.cp.stop()));
}

/** A kubeconfig for `server` with the deployer's token (what the Cluster's Secret holds). */
export function targetKubeconfigYaml(cp: ControlPlane): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 't',
        cluster: {
          server: cp.server,
          'certificate-authority-data': Buffer.from(cp.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: 'u', user: { token: cp.tokens[TARGET_DEPLOYER] } }],
    contexts: [{ name: 't', context: { cluster: 't', user: 'u' } }],
    'current-context': 't',
  });
}

const clusterBody = (
  namespace: string,
  name: string,
  labels: Readonly<Record<string, string>>,
  secret: string,
) => ({
  apiVersion: `${API_GROUP}/${API_VERSION}`,
  kind: 'Cluster',
  metadata: { name, namespace, labels: { [FLEET_LABEL]: 'true', ...labels } },
  spec: { kubeConfig: { secretRef: { name: secret } } },
});

/**
 * Registers a target as Cluster `name` (default the target's name) in the management namespace:
 * the kubeconfig Secret `kubeconfig-<target>` (written once per target) and the Cluster object,
 * labelled FLEET_LABEL plus `labels` (default the target's).
 */
export async function registerCluster(
  mgmt: KubeConfig,
  namespace: string,
  target: FleetTarget,
  as: { name?: string; labels?: Readonly<Record<string, string>> } = {},
): Promise<void> {
  const secret = `kubeconfig-${target.name}`;
  try {
    await mgmt.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace,
      body: { metadata: { name: secret }, stringData: { value: targetKubeconfigYaml(target.cp) } },
    });
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 409)) throw error;
  }
  const name = as.name ?? target.name;
  await mgmt.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    namespace,
    plural: 'clusters',
    body: clusterBody(namespace, name, as.labels ?? target.labels, secret),
  });
}

/** Registers every target under its own name and labels. */
export async function registerClusters(
  mgmt: KubeConfig,
  namespace: string,
  targets: readonly FleetTarget[],
): Promise<void> {
  for (const t of targets) await registerCluster(mgmt, namespace, t);
}

/** Replaces a Cluster's labels (FLEET_LABEL stays unless `labels` sets it). */
export async function relabelCluster(
  mgmt: KubeConfig,
  namespace: string,
  name: string,
  labels: Readonly<Record<string, string | null>>,
): Promise<void> {
  await mgmt.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
    {
      group: API_GROUP,
      version: API_VERSION,
      namespace,
      plural: 'clusters',
      name,
      body: { metadata: { labels } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

export async function deleteCluster(mgmt: KubeConfig, namespace: string, name: string): Promise<void> {
  await mgmt.makeApiClient(CustomObjectsApi).deleteNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    namespace,
    plural: 'clusters',
    name,
  });
}

/** Creates `namespace` on every target (Releases do not create their targetNamespace). */
export async function createTargetNamespace(
  targets: readonly FleetTarget[],
  namespace: string,
): Promise<void> {
  await Promise.all(
    targets.map((t) =>
      t.kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// The app: a Helm chart in Git. Revision n renders a ConfigMap `web` {revision, ring, cluster} and
// a Deployment `web` (image :n, progressDeadlineSeconds 2 by default); its pods carry KWOK's failure label
// when the value `ring` is one of the revision's failing rings.

export interface ChartRevision {
  /** Written into the ConfigMap and the image tag: what a target runs is readable there. */
  readonly revision: number;
  /** Rings (the `ring` value, i.e. the Cluster label through ${cluster.labels.ring}) whose pods fail. */
  readonly failRings?: readonly string[];
  /** Replicas of the Deployment (default 1). */
  readonly replicas?: number;
  /**
   * The Deployment's progressDeadlineSeconds (default 2: a failing pod turns the child's Healthy
   * False/Degraded within seconds; a long one keeps it Progressing, a wait, e.g. for stepTimeout).
   */
  readonly progressDeadlineSeconds?: number;
}

/** The chart's files at a revision (commit them over the previous revision: same paths). */
export function fleetChart({
  revision,
  failRings = [],
  replicas = 1,
  progressDeadlineSeconds = 2,
}: ChartRevision): FixtureFiles {
  const failing =
    failRings.length === 0
      ? 'false'
      : `has .Values.ring (list ${failRings.map((r) => JSON.stringify(r)).join(' ')})`;
  return {
    'chart/Chart.yaml': 'apiVersion: v2\nname: fleet-app\nversion: 0.1.0\n',
    'chart/values.yaml': 'ring: ""\ncluster: ""\n',
    'chart/templates/configmap.yaml': [
      'apiVersion: v1',
      'kind: ConfigMap',
      `metadata: {name: ${APP_NAME}}`,
      'data:',
      `  revision: "${revision}"`,
      '  ring: {{ .Values.ring | quote }}',
      '  cluster: {{ .Values.cluster | quote }}',
      '',
    ].join('\n'),
    'chart/templates/deployment.yaml': [
      'apiVersion: apps/v1',
      'kind: Deployment',
      `metadata: {name: ${APP_NAME}}`,
      'spec:',
      `  replicas: ${replicas}`,
      `  progressDeadlineSeconds: ${progressDeadlineSeconds}`,
      `  selector: {matchLabels: {app: ${APP_NAME}}}`,
      '  template:',
      '    metadata:',
      '      labels:',
      `        app: ${APP_NAME}`,
      `        {{- if ${failing} }}`,
      `        ${FAIL_LABEL}: "true"`,
      '        {{- end }}',
      '    spec:',
      `      containers: [{name: main, image: "registry.invalid/${APP_NAME}:${revision}"}]`,
      '',
    ].join('\n'),
  };
}

/**
 * The ReleaseSet template of the fleet app: the chart at `chart/` of `repoUrl` on `branch`, values
 * `ring: ${cluster.labels.ring}` and `cluster: ${cluster.name}`, health assessed (so a crash-looping
 * Deployment is a failure of the child's verdict).
 */
export function fleetTemplate(
  repoUrl: string,
  targetNamespace: string,
  branch = 'main',
): Record<string, unknown> {
  return {
    spec: {
      targetNamespace,
      source: { git: { url: repoUrl, path: 'chart', ref: { branch } } },
      content: {
        type: 'Helm',
        helm: { values: { ring: '${cluster.labels.ring}', cluster: '${cluster.name}' } },
      },
      healthAssessment: { interval: '1m', progressDeadline: '10m' },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// ReleaseSets and their children on the management apiserver.

const setsBase = (namespace: string) => ({
  group: API_GROUP,
  version: API_VERSION,
  namespace,
  plural: 'releasesets',
});

export function releaseSetApi(kc: KubeConfig, namespace: string) {
  const api = kc.makeApiClient(CustomObjectsApi);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  return {
    async create(
      name: string,
      spec: Record<string, unknown>,
      metadata: { annotations?: Record<string, string>; labels?: Record<string, string> } = {},
    ): Promise<ReleaseSet> {
      const raw: unknown = await api.createNamespacedCustomObject({
        ...setsBase(namespace),
        body: {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'ReleaseSet',
          metadata: { name, namespace, ...metadata },
          spec,
        },
      });
      return parsedSet(raw);
    },
    async get(name: string): Promise<ReleaseSet> {
      return parsedSet(await api.getNamespacedCustomObject({ ...setsBase(namespace), name }));
    },
    /** A JSON merge patch of the set (spec or metadata). */
    async patch(name: string, patch: Record<string, unknown>): Promise<ReleaseSet> {
      return parsedSet(
        await api.patchNamespacedCustomObject({ ...setsBase(namespace), name, body: patch }, mergePatch),
      );
    },
    async delete(name: string): Promise<void> {
      await api.deleteNamespacedCustomObject({ ...setsBase(namespace), name });
    },
    /** The set's children: the Releases labelled convoy.dev/release-set=<set>, by name. */
    async children(set: string): Promise<Map<string, Release>> {
      const list = (await api.listNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace,
        plural: 'releases',
        labelSelector: `convoy.dev/release-set=${set}`,
      })) as { items: unknown[] };
      const out = new Map<string, Release>();
      for (const item of list.items) {
        const parsed = parseRelease(item);
        if (!parsed.ok) throw new Error(`a child of ${namespace}/${set} does not parse: ${parsed.error}`);
        out.set(parsed.value.metadata.name, parsed.value);
      }
      return out;
    },
    /** One Release of the namespace, or undefined when there is none. */
    async release(name: string): Promise<Release | undefined> {
      try {
        const parsed = parseRelease(
          await api.getNamespacedCustomObject({
            group: API_GROUP,
            version: API_VERSION,
            namespace,
            plural: 'releases',
            name,
          }),
        );
        if (!parsed.ok) throw new Error(`Release ${namespace}/${name} does not parse: ${parsed.error}`);
        return parsed.value;
      } catch (error) {
        if (error instanceof ApiException && error.code === 404) return undefined;
        throw error;
      }
    },
    async patchRelease(name: string, patch: Record<string, unknown>): Promise<void> {
      await api.patchNamespacedCustomObject(
        { group: API_GROUP, version: API_VERSION, namespace, plural: 'releases', name, body: patch },
        mergePatch,
      );
    },
  };
}

export type ReleaseSetApi = ReturnType<typeof releaseSetApi>;

function parsedSet(raw: unknown): ReleaseSet {
  const parsed = parseReleaseSet(raw);
  if (!parsed.ok) throw new Error(`a ReleaseSet does not parse: ${parsed.error}`);
  return parsed.value;
}

export const conditionOf = (set: ReleaseSet, type: string) =>
  set.status?.conditions?.find((c) => c.type === type);

// ---------------------------------------------------------------------------------------------
// What a target runs.

export interface TargetApp {
  /** The revision of the ConfigMap the chart rendered there, undefined when there is none. */
  readonly revision: number | undefined;
  readonly ring: string | undefined;
  /** The Deployment's image, undefined when there is none. */
  readonly image: string | undefined;
  /**
   * The Deployment's rollout is complete, as `kubectl rollout status` judges it: the controller saw
   * its generation, every replica is updated and available (an old ReplicaSet's pod keeps the
   * Deployment Available during a failing update, so Available alone says nothing about it).
   */
  readonly rolledOut: boolean;
}

/** What the chart's objects in `namespace` on `target` say. */
export async function targetApp(target: FleetTarget, namespace: string): Promise<TargetApp> {
  const core = target.kc.makeApiClient(CoreV1Api);
  const apps = target.kc.makeApiClient(AppsV1Api);
  const orUndefined = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw error;
    }
  };
  const cm = await orUndefined(() => core.readNamespacedConfigMap({ namespace, name: APP_NAME }));
  const deployment: V1Deployment | undefined = await orUndefined(() =>
    apps.readNamespacedDeployment({ namespace, name: APP_NAME }),
  );
  const revision = cm?.data?.['revision'];
  return {
    revision: revision === undefined ? undefined : Number(revision),
    ring: cm?.data?.['ring'],
    image: deployment?.spec?.template.spec?.containers[0]?.image,
    rolledOut: deployment === undefined ? false : deploymentRolledOut(deployment),
  };
}
