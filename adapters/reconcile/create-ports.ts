import { join } from 'node:path';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import { DEFAULT_RENDER_LIMITS, type RenderLimits } from '../../domain/reconcile/render-limits.ts';
import { describeZodError, lifecycleSchema, parseRelease } from '../../domain/api/objects.ts';
import type { RenderStore } from '../../domain/store/render-store.ts';
import { DEFAULT_RETENTION_POLICY, type RetentionPolicy } from '../../domain/store/retention.ts';
import { createClusterResolver, type ClusterObject } from '../kube/cluster-resolver.ts';
import type { EksAccess } from '../kube/target-access.ts';
import { DEFAULT_TENANCY, type TenancySettings } from '../../domain/tenancy/settings.ts';
import type { KubeClientConfig } from '../kube/kubeconfig.ts';
import type { RequestCounter } from '../kube/target-cluster.ts';
import { createManagementReader } from '../kube/management-reader.ts';
import { createIdentityReads } from '../kube/identity-reads.ts';
import { createGitCache } from '../source/git-cache.ts';
import { createToolLocator } from '../tools/binaries.ts';
import { createMutationsPort } from './mutations-port.ts';
import { ALL_NAMESPACES, inNamespace, type PortCaches } from './port-caches.ts';
import { createRendererPort } from './renderer-port.ts';
import { createSourcePort } from './source-port.ts';
import { createStorePort } from './store-port.ts';
import { createValuesPort } from './values-port.ts';
import { createDependencyReads } from './dependency-reads.ts';
import type { EcrTokenSource } from '../aws/ecr-token.ts';
import { STRICT_EGRESS } from '../../domain/egress/policy.ts';
import { createEgress } from '../egress/client.ts';
import type { Resolver } from '../egress/lookup.ts';

export interface ReconcileWiring {
  /**
   * The management cluster: convoy's objects (read with these credentials), the Secrets and
   * ConfigMaps a Release names (read as the Release's identity: impersonated), and inCluster targets.
   */
  managementKubeConfig: KubeClientConfig;
  /** undefined: no render store (pins answer NoStore; drift and health have nothing to load). */
  store: RenderStore | undefined;
  /** Where git checkouts and chart downloads are cached (/tmp on Lambda). */
  cacheDir: string;
  retentionDefault?: RetentionPolicy;
  requestCounter?: RequestCounter;
  now?: () => Date;
  /** The installation's tenancy settings (identity, inCluster and cross-namespace policy); default DEFAULT_TENANCY. */
  tenancy?: TenancySettings | undefined;
  /** Reaches `eks` Clusters; undefined: refused (no AWS credentials). */
  eks?: EksAccess | undefined;
  /** Per-container caches (ls-remote answers, Mutations); undefined: none, every run reads. */
  caches?: PortCaches | undefined;
  /** Per-request timeout of OCI registry requests; default 30 s. */
  ociTimeoutMs?: number | undefined;
  /** Largest content layer of a spec.source.oci artifact (CONVOY_OCI_MAX_ARTIFACT_BYTES); default 64 MiB. */
  ociMaxArtifactBytes?: number | undefined;
  /** ECR tokens with the functions' own role (`provider: aws`); undefined: refused. */
  ecr?: EcrTokenSource | undefined;
  /** How large a render this installation takes; what is left out is DEFAULT_RENDER_LIMITS's (domain/reconcile/render-limits.ts). */
  renderLimits?: Partial<RenderLimits> | undefined;
  /** Name resolution of the egress client (tests: a stub resolver); default dns.lookup. The policy is `tenancy.egress`. */
  egressResolver?: Resolver | undefined;
}

/** Builds the reconcile loop's ports from real adapters. Create once per container and reuse. */
export function createReconcilePorts(wiring: ReconcileWiring): ReconcilePorts {
  const now = wiring.now ?? (() => new Date());
  const reader = createManagementReader(wiring.managementKubeConfig);
  const readsAs = createIdentityReads(wiring.managementKubeConfig);
  const gitCache = createGitCache({ dir: join(wiring.cacheDir, 'git'), maxEntries: 64 });
  const tools = createToolLocator();
  const clusters = createClusterResolver({
    managementKubeConfig: wiring.managementKubeConfig,
    readSecret: (ns, name, as) => readsAs(as).secretData(ns, name),
    readCluster: async (ns, name) => {
      const caches = wiring.caches;
      const listed =
        caches &&
        (await caches.clusters.get(ALL_NAMESPACES, 'clusters', () => reader.listAllNamespaces('clusters')));
      const hit =
        listed &&
        inNamespace(listed, ns).find((c) => (c['metadata'] as { name?: string } | undefined)?.name === name);
      // Not in the cached list (created since): read it by name.
      return (hit ?? (await reader.getObject('clusters', ns, name))) as ClusterObject | undefined;
    },
    requestCounter: wiring.requestCounter,
    tenancy: wiring.tenancy,
    eks: wiring.eks,
  });
  const tenancy = wiring.tenancy ?? DEFAULT_TENANCY;
  // Every Git, Helm and OCI request of these ports goes through one egress client: the installation's policy.
  const egress = createEgress(tenancy.egress ?? STRICT_EGRESS, { resolver: wiring.egressResolver });
  const renderLimits: RenderLimits = { ...DEFAULT_RENDER_LIMITS, ...wiring.renderLimits };
  return {
    now,
    source: createSourcePort({
      reader,
      readsAs,
      gitCache,
      helmCacheDir: join(wiring.cacheDir, 'charts'),
      tenancy,
      refCache: wiring.caches?.refs,
      ociTimeoutMs: wiring.ociTimeoutMs,
      ociMaxArtifactBytes: wiring.ociMaxArtifactBytes,
      ecr: wiring.ecr,
      egress,
    }),
    cluster: clusters,
    values: createValuesPort({ reader, readsAs, gitCache, tenancy, egress }),
    renderer: createRendererPort(() => tools.locate(), { maxOutputBytes: renderLimits.maxBytes }),
    mutations: createMutationsPort(reader, wiring.caches?.mutations),
    lifecycle: {
      async hooksOf(release) {
        const ref = release.spec.lifecycleRef;
        if (ref === undefined) return [];
        const ns = release.metadata.namespace ?? 'default';
        const raw = await reader.getObject('lifecycles', ns, ref.name);
        if (raw === undefined) throw new Error(`Lifecycle ${ns}/${ref.name} does not exist`);
        const parsed = lifecycleSchema.safeParse(raw);
        if (!parsed.success)
          throw new Error(`Lifecycle ${ns}/${ref.name} does not parse: ${describeZodError(parsed.error)}`);
        return parsed.data.spec.hooks;
      },
    },
    releases: {
      async inNamespace(namespace) {
        const items = await reader.listObjects('releases', namespace);
        return items.flatMap((raw) => {
          const parsed = parseRelease(raw);
          return parsed.ok ? [parsed.value] : [];
        });
      },
    },
    dependencies: createDependencyReads(wiring.managementKubeConfig),
    store: wiring.store === undefined ? undefined : createStorePort(wiring.store, now),
    retentionDefault: wiring.retentionDefault ?? DEFAULT_RETENTION_POLICY,
    renderLimits,
  };
}
