// A real environment for the reconcile loop: the test apiserver (management and
// target cluster at once), a git server over smart HTTP, fauxqs S3 as the render
// store, and the real helm/kubectl binaries.
//
// The functions act as an install grants them (dev/shipped-identities.ts): a ServiceAccount bound
// exactly like the convoy:functions group by the install manifests' RBAC, with the test namespace
// as the one tenant namespace — never admin. Releases without serviceAccountName act as the
// tenant's deployer (tenant-deployer.ts), reached by impersonation.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { KubeConfig } from '@kubernetes/client-node';
import { startFauxqs } from 'fauxqs';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import type { KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import { createReconcilePorts, type ReconcileWiring } from '../../adapters/reconcile/create-ports.ts';
import { createS3RenderStore } from '../../adapters/store/s3-render-store.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { ReconcilePorts } from '../../domain/reconcile/ports.ts';
import type { Outcome } from '../../domain/runtime/outcome.ts';
import type { RenderStore } from '../../domain/store/render-store.ts';
import { startGitHttpServer, type GitHttpServer } from '../../dev/git-http-server.ts';
import { installShippedIdentities } from '../../dev/shipped-identities.ts';
import type { TenancySettings } from '../../domain/tenancy/settings.ts';
import { parseEgressAllow, type AllowEntry } from '../../domain/egress/policy.ts';
import { createEgress, type Egress } from '../../adapters/egress/client.ts';
import { createLogger } from '../../platform/logger.ts';
import { tenancyFromEnv } from '../../platform/tenancy-config.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createReconcileRecordHandler } from '../../functions/reconcile/reconcile-record.ts';
import { hintKey } from '../../functions/runtime/applied-hint.ts';
import type { Loop } from '../../domain/runtime/queue-message.ts';
import { createRepo, commitFiles, type FixtureFiles } from './git-fixtures.ts';
import { freshNamespace, type FreshNamespace } from './kube.ts';
import { createTenantDeployer, TENANT_DEPLOYER } from './tenant-deployer.ts';
import { convoyApi } from './releases.ts';

export interface ReconcileEnv {
  /** Admin, for setting the scene. */
  kc: KubeConfig;
  /** Admin again, as the product APIs take a cluster: for setting the scene (a hand edit, another field manager). */
  config: KubeClientConfig;
  /** The functions' identity (never admin): what ports() and reconcile() act as. Wire product code with this. */
  functionsConfig: KubeClientConfig;
  /**
   * The installation's tenancy settings (from its settings ConfigMap), which the default ports use.
   * Its egress allow list names exactly the servers of this env and those a test adds (allowEgress).
   */
  tenancy: TenancySettings;
  /**
   * Adds `host:port` entries (the servers a test starts on 127.0.0.1) to the egress allow list of
   * every port of this env, present and future; everything else on loopback stays refused.
   */
  allowEgress(...hosts: string[]): void;
  /** The egress client of this env's policy, for tests that call a source adapter directly. */
  readonly egress: Egress;
  ns: FreshNamespace;
  /** The installation namespace (the functions' Leases live there: CONVOY_NAMESPACE). */
  installationNamespace: string;
  git: GitHttpServer;
  gitRoot: string;
  store: RenderStore;
  s3: S3Client;
  bucket: string;
  api: ReturnType<typeof convoyApi>;
  /** Ports as production builds them; `override` swaps single ports for fault injection. */
  ports(override?: Partial<ReconcilePorts> & { wiring?: Partial<ReconcileWiring> }): ReconcilePorts;
  /** Creates a bare repo served at `${git.url}/<name>.git`. */
  repo(name: string, files: FixtureFiles, opts?: { tag?: string }): Promise<{ url: string; commit: string }>;
  commit(name: string, files: FixtureFiles): Promise<{ commit: string }>;
  /**
   * One reconcile through the function's record handler: load, reconcile, write status.
   * `progressIntervalMs`: a run longer than this writes its progress to status (as the function does every 10 s).
   */
  reconcile(
    name: string,
    ports?: ReconcilePorts,
    options?: { progressIntervalMs?: number },
  ): Promise<{ outcome: Outcome; release: Release; notified: Loop[] }>;
  close(): Promise<void>;
}

export async function startReconcileEnv(kc: KubeConfig, prefix: string): Promise<ReconcileEnv> {
  const ns = await freshNamespace(kc, prefix);
  const installation = await freshNamespace(kc, `${prefix}-system`);
  const identities = await installShippedIdentities(kc, {
    namespace: installation.name,
    tenancy: { tenantNamespaces: [ns.name], defaultServiceAccount: TENANT_DEPLOYER },
    watchSecrets: false,
    clusterScopedSuffix: `-${installation.name}`,
  });
  const removeDeployer = await createTenantDeployer(kc, ns.name);
  const gitRoot = await mkdtemp(join(tmpdir(), 'convoy-git-'));
  const cacheDir = await mkdtemp(join(tmpdir(), 'convoy-cache-'));
  const git = await startGitHttpServer({ projectRoot: gitRoot });
  // The egress allow list: this env's Git server and the apiserver (the target of the Clusters
  // whose kubeconfig Secrets tests write), then what tests add. One array, read at each
  // connection by every port built from `tenancy` (the policy holds it, never copies it).
  const apiserver = new URL(kc.getCurrentCluster()?.server ?? 'https://127.0.0.1').host;
  const allowed: AllowEntry[] = parseEgressAllow(
    `${new URL(git.url).host},${apiserver}`,
    'the harness allow list',
  );
  const tenancy: TenancySettings = {
    ...tenancyFromEnv(identities.settings),
    egress: { allow: allowed, clusterNetworks: [] },
  };
  const fauxqs = await startFauxqs({ port: 0, logger: false });
  const s3 = new S3Client({
    endpoint: `http://127.0.0.1:${fauxqs.port}`,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const bucket = 'convoy-renders';
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const store = createS3RenderStore({ s3, bucket });
  const api = convoyApi(kc);
  await api.create('Cluster', ns.name, 'local', { inCluster: true });
  const config = fromClientNodeKubeConfig(kc);
  const functionsConfig = fromClientNodeKubeConfig(identities.functions);
  const defaultPorts = createReconcilePorts({
    managementKubeConfig: functionsConfig,
    store,
    cacheDir,
    tenancy,
  });
  const statusWriter = createStatusWriter(functionsConfig);
  const logger = createLogger({ base: { test: prefix }, level: 'error' });
  // The env's hint key, as a function container makes one: the reconcile seals its hints (and so notifies before its write).
  const key = hintKey(undefined);

  return {
    kc,
    config,
    functionsConfig,
    tenancy,
    allowEgress(...hosts) {
      allowed.push(...parseEgressAllow(hosts.join(','), 'allowEgress'));
    },
    egress: createEgress(tenancy.egress!),
    ns,
    installationNamespace: installation.name,
    git,
    gitRoot,
    store,
    s3,
    bucket,
    api,
    ports(override = {}) {
      const { wiring, ...ports } = override;
      const base = wiring
        ? createReconcilePorts({ managementKubeConfig: functionsConfig, store, cacheDir, tenancy, ...wiring })
        : defaultPorts;
      return { ...base, ...ports };
    },
    async repo(name, files, opts = {}) {
      const { commit } = await createRepo(gitRoot, name, files, opts.tag ? { tag: opts.tag } : {});
      return { url: `${git.url}/${name}.git`, commit };
    },
    commit: (name, files) => commitFiles(gitRoot, name, files),
    async reconcile(name, ports = defaultPorts, options = {}) {
      const notified: Loop[] = [];
      const handler = createReconcileRecordHandler({
        releases: createReleaseSource(functionsConfig),
        statusWriter,
        ports,
        hintKey: key,
        ...(options.progressIntervalMs !== undefined
          ? { progress: { intervalMs: options.progressIntervalMs } }
          : {}),
        notify: (loop) => {
          notified.push(loop);
          return Promise.resolve();
        },
      });
      const current = await api.getRelease(ns.name, name);
      const outcome = await handler(
        {
          v: 1,
          loop: 'reconcile',
          namespace: ns.name,
          name,
          uid: current.metadata.uid ?? '',
          cause: 'test',
          sentAt: new Date().toISOString(),
        },
        { logger, receiveCount: 1, messageId: 'test', record: {} as never },
      );
      return { outcome, release: await api.getRelease(ns.name, name), notified };
    },
    async close() {
      await git.stop();
      await fauxqs.stop();
      s3.destroy();
      await identities.remove();
      await removeDeployer();
      await ns.delete();
      await installation.delete();
      await rm(gitRoot, { recursive: true, force: true });
      await rm(cacheDir, { recursive: true, force: true });
    },
  };
}
