/**
 * For each rendered object: the live object and what a server-side apply
 * would make of it (dry run, field manager `convoy`, force, Strict), on the
 * Release's target cluster with the user's credentials. The CLI's `diff` prints the
 * difference and `tree` the per-object sync and health; the relay's API serves the same
 * tree and render diff to the dashboard.
 */
import { Buffer } from 'node:buffer';
import { createHmac, randomBytes } from 'node:crypto';
import { convoyPath } from '../adapters/kube/convoy-paths.ts';
import { createDiscovery } from '../adapters/kube/discovery.ts';
import { createKubeClient, createKubeHttp, isKubeApiError, resourcePath } from '../adapters/kube/http.ts';
import type { KubeClientConfig } from '../adapters/kube/kubeconfig.ts';
import { loadStoredKubeConfig } from '../adapters/kube/cluster-resolver.ts';
import { locateObject } from '../adapters/kube/object-paths.ts';
import { guardTargetServer, TargetEgressRefusedError } from '../adapters/kube/target-egress.ts';
import type { Release } from '../domain/api/index.ts';
import type { KubeObject } from '../domain/render/kube-object.ts';
import type { Cluster } from './cluster.ts';
import { ViewFailure } from './failure.ts';

export interface Compared {
  object: KubeObject;
  /** The live object; undefined when it does not exist. */
  live: Record<string, unknown> | undefined;
  /** The dry-run result; undefined when the kind is not served (e.g. its CRD is in the same render). */
  desired: Record<string, unknown> | undefined;
  /** Why there is no dry run result. */
  note?: string;
}

/** The target cluster's config: the user's own for inCluster, else the Cluster's kubeconfig Secret (read with the user's rights). */
export async function targetConfig(cluster: Cluster, release: Release): Promise<KubeClientConfig> {
  const ns = release.metadata.namespace ?? 'default';
  const name = release.spec.cluster.name;
  let obj: { spec?: { inCluster?: boolean; kubeConfig?: { secretRef?: { name: string; key?: string } } } };
  try {
    obj = await cluster.client.get(convoyPath('clusters', ns, name));
  } catch (error) {
    if (isKubeApiError(error, 404))
      throw new ViewFailure(`Cluster ${ns}/${name} (spec.cluster.name) does not exist`);
    throw error;
  }
  if (obj.spec?.inCluster === true) return cluster.config;
  const ref = obj.spec?.kubeConfig?.secretRef;
  if (ref === undefined)
    throw new ViewFailure(`Cluster ${ns}/${name} has neither spec.inCluster nor spec.kubeConfig.secretRef`);
  const secret = await cluster.client.get<{ data?: Record<string, string> }>(
    resourcePath('v1', 'secrets', ns, ref.name),
  );
  const encoded = secret.data?.[ref.key ?? 'value'];
  if (encoded === undefined)
    throw new ViewFailure(
      `Secret ${ns}/${ref.name} has no key "${ref.key ?? 'value'}" holding the Cluster's kubeconfig`,
    );
  const stored = loadStoredKubeConfig(
    Buffer.from(encoded, 'base64').toString('utf8'),
    `the kubeconfig of Cluster ${ns}/${name}`,
  );
  if (cluster.targetEgress === undefined) return stored;
  try {
    return await guardTargetServer(stored, cluster.targetEgress, `Cluster ${ns}/${name}: its kubeconfig`);
  } catch (error) {
    if (error instanceof TargetEgressRefusedError) throw new ViewFailure(error.message);
    throw error;
  }
}

export async function compareWithLive(
  config: KubeClientConfig,
  objects: readonly KubeObject[],
): Promise<Compared[]> {
  const http = createKubeHttp(config, { timeoutMs: 30_000, userAgent: 'convoy-cli' });
  const client = createKubeClient(config, { timeoutMs: 30_000, userAgent: 'convoy-cli' });
  const discovery = createDiscovery(async (init) => {
    const r = await http({
      method: init.method,
      path: init.path,
      query: init.query,
      body: init.body,
      contentType: init.contentType,
    });
    return { status: r.status, body: r.body };
  });
  const out: Compared[] = [];
  for (const object of objects) {
    const resource = await discovery.resourceFor(object.apiVersion, object.kind);
    const located = resource === undefined ? undefined : locateObject(object, resource);
    if (located === undefined) {
      out.push({
        object,
        live: undefined,
        desired: undefined,
        note: `${object.apiVersion} ${object.kind} is not served yet`,
      });
      continue;
    }
    let live: Record<string, unknown> | undefined;
    try {
      live = await client.get(located.path);
    } catch (error) {
      if (!isKubeApiError(error, 404)) throw error;
    }
    const desired = await client.patch<Record<string, unknown>>(located.path, JSON.stringify(located.body), {
      type: 'apply',
      fieldManager: 'convoy',
      force: true,
      fieldValidation: 'Strict',
      dryRun: true,
    });
    out.push({ object, live, desired });
  }
  return out;
}

const NOISE = ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp'];

/** The object without the fields the server owns (status, resourceVersion, managedFields, …); Secret data masked. */
export function comparable(obj: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (obj === undefined) return undefined;
  const copy = structuredClone(obj) as Record<string, unknown> & { metadata?: Record<string, unknown> };
  delete copy.status;
  if (copy.metadata !== undefined) for (const key of NOISE) delete copy.metadata[key];
  if (copy.kind === 'Secret' && copy.apiVersion === 'v1') {
    for (const field of ['data', 'stringData'] as const) {
      const data = copy[field] as Record<string, string> | undefined;
      if (data !== undefined)
        copy[field] = Object.fromEntries(
          Object.keys(data).map((k) => [k, `<hidden ${hash(String(data[k]))}>`]),
        );
    }
  }
  return copy;
}

/** A key of this process only: equal values get equal fingerprints within one run, and nothing can be looked up across runs. */
const FINGERPRINT_KEY = randomBytes(32);

function hash(value: string): string {
  return createHmac('sha256', FINGERPRINT_KEY).update(value).digest('hex').slice(0, 12);
}

export const objectName = (o: KubeObject): string =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
