// convoy's whole runtime (dev/runtime.ts: fauxqs SQS/S3, the relay, one poller
// per queue calling the real function handlers) against the test apiserver,
// with a git server over smart HTTP, a namespace of its own with a Cluster
// `local` (inCluster), and every log line kept for assertions.
//
// The relay watches Releases in every namespace; the runtime is told to send
// only this namespace's Releases (onlyNamespaces), so Releases of test files
// running in parallel are never reconciled by it.
//
// The loops act as an install's identities (dev/shipped-identities.ts): the relay with its
// ServiceAccount's token, the functions with the token of the installation's ServiceAccount
// FUNCTIONS_SERVICE_ACCOUNT, a subject of every functions binding of the install manifests (bound
// exactly like the group convoy:functions) — never admin. Not the control plane's static user of
// that group: every installation on the run's apiserver binds the group, so a test taking a verb from
// its installation's functions ClusterRole would still find it granted by a parallel file's. The
// ServiceAccount is bound by its own installation only (functionsMay, functions-access.ts, asks for it);
// the group user is proven in shipped-identities.test.ts and dev-parity.test.ts. The test namespace is the installation's one tenant
// namespace; Releases without serviceAccountName act as its ServiceAccount TENANT_DEPLOYER (the
// installation's defaultServiceAccount), the tenant's identity, trusted with the cluster
// (cluster-admin) — a test gives a Release a narrower ServiceAccount to prove a refusal.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import { ApiException, CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { installShippedIdentities } from '../../dev/shipped-identities.ts';
import { createTenantDeployer, TENANT_DEPLOYER } from './tenant-deployer.ts';
import { API_GROUP, API_VERSION, type Condition } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import { leaseName } from '../../domain/runtime/lease.ts';
import type { Loop, QueueLoop, QueueMessage } from '../../domain/runtime/queue-message.ts';
import { startGitHttpServer, type GitHttpServer } from '../../dev/git-http-server.ts';
import { startConvoyRuntime, type ConvoyRuntime, type RuntimeOptions } from '../../dev/runtime.ts';
import {
  prepareLambdaFunctions,
  type LambdaFunctions,
  type LambdaFunctionsOptions,
} from '../../dev/lambda/lambda-functions.ts';
import { createLogger } from '../../platform/logger.ts';
import { commitFiles, createRepo, type FixtureFiles } from './git-fixtures.ts';
import { freshNamespace, type FreshNamespace } from './kube.ts';
import { convoyApi } from './releases.ts';

/** One structured log line of the runtime, parsed. */
export interface LogLine {
  readonly time: string;
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

export interface RuntimeEnv {
  readonly kc: KubeConfig;
  /** Where the test's Releases live (and their objects: targetNamespace). */
  readonly ns: FreshNamespace;
  /** The installation namespace: the relay's leader Lease and the per-Release Leases. */
  readonly installation: FreshNamespace;
  /** The functions' identity: a token of the installation's ServiceAccount FUNCTIONS_SERVICE_ACCOUNT (functions-access.ts asks what it may do). */
  readonly functionsKc: KubeConfig;
  readonly runtime: ConvoyRuntime;
  readonly git: GitHttpServer;
  readonly api: ReturnType<typeof convoyApi>;
  /** Every line the runtime logged so far, oldest first. */
  readonly logs: readonly LogLine[];
  /** Creates a bare repo served at `${git.url}/<name>.git`. */
  repo(name: string, files: FixtureFiles): Promise<{ url: string; commit: string }>;
  commit(name: string, files: FixtureFiles): Promise<{ commit: string }>;
  /** Creates a Release in `ns` the way kubectl would (a plain create; the relay sees it through its watch). */
  createRelease(name: string, spec: Record<string, unknown>): Promise<Release>;
  getRelease(name: string): Promise<Release>;
  deleteRelease(name: string): Promise<void>;
  /** One loop's (default reconcile) record log lines of a Release, optionally only one message's or one kind. */
  recordLines(name: string, filter?: { messageId?: string; msg?: string; loop?: Loop }): LogLine[];
  /** Sends raw bodies to a loop's queue in ONE SendMessageBatch; returns the message ids in order. */
  sendRaw(loop: QueueLoop, bodies: readonly string[]): Promise<string[]>;
  /** A valid queue message body for a Release (or, loop `fleet`, a ReleaseSet) of this namespace. */
  messageBody(name: string, uid: string, cause: string, loop?: QueueLoop): string;
  /** The reconcile Lease of a Release in the installation namespace, or undefined. */
  lease(uid: string, loop?: QueueLoop): Promise<V1Lease | undefined>;
  /** Receives (and leaves invisible for 60 s) what the loop's dead-letter queue holds now. */
  dlqMessages(loop: QueueLoop): Promise<Message[]>;
  /** ApproximateNumberOfMessages(+NotVisible) of a loop's queue. */
  queueDepth(loop: QueueLoop): Promise<{ visible: number; inFlight: number; delayed: number }>;
  /** The functions under the Lambda runtime emulator, when started with `lambda`. */
  lambda(): LambdaFunctions | undefined;
  /**
   * Stops the runtime and starts it again with the same options, as `convoy dev` stopped and started
   * again: fauxqs (its queues and their messages, the render bucket), the relay and the pollers start
   * from nothing; what the loops remember is on the apiserver. `runtime` is the new one afterwards.
   */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export const appliedOf = (release: Release): Condition | undefined =>
  release.status?.conditions?.find((c) => c.type === 'Applied');

/** Polls `check` every `intervalMs` until it returns a value other than undefined/false, or throws after timeoutMs. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 15_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(intervalMs);
  }
}

export async function startRuntimeEnv(
  kc: KubeConfig,
  prefix: string,
  options: Pick<
    RuntimeOptions,
    'visibilityTimeoutSeconds' | 'maxReceiveCount' | 'relayTickMs' | 'pollerConcurrency'
  > & {
    /**
     * Runs the functions as their bundles under the Lambda runtime emulator (dev/lambda), with the
     * settings of the construct's template synthesized for this installation, instead of in-process.
     * The queues then take the template's visibility timeout and maxReceiveCount unless given here.
     */
    lambda?: Omit<LambdaFunctionsOptions, 'installationNamespace' | 'tenancy'>;
    /**
     * `host:port` of the test's own servers Releases may reach besides the env's Git server (the
     * egress policy refuses every other loopback port). Start them first (a proxy in front of the
     * Git server takes its target lazily).
     */
    egressAllow?: readonly string[];
  } = {},
): Promise<RuntimeEnv> {
  const ns = await freshNamespace(kc, prefix);
  const installation = await freshNamespace(kc, `${prefix}-system`);
  const gitRoot = await mkdtemp(join(tmpdir(), 'convoy-git-'));
  const git = await startGitHttpServer({ projectRoot: gitRoot });
  const api = convoyApi(kc);
  await api.create('Cluster', ns.name, 'local', { inCluster: true });

  const logs: LogLine[] = [];
  const logger = createLogger({
    level: 'info',
    write: (line) => {
      const parsed = JSON.parse(line) as LogLine;
      logs.push(parsed);
      if (process.env['CONVOY_TEST_LOGS'] === '1') process.stderr.write(`${line}\n`);
    },
  });
  // The egress policy refuses loopback: this env's Git server is the one local server Releases may reach.
  const egressAllow = [new URL(git.url).host, ...(options.egressAllow ?? [])].join(',');
  const identities = await installShippedIdentities(kc, {
    namespace: installation.name,
    tenancy: { tenantNamespaces: [ns.name], defaultServiceAccount: TENANT_DEPLOYER, egressAllow },
    watchSecrets: true,
    clusterScopedSuffix: `-${installation.name}`,
  });
  const removeDeployer = await createTenantDeployer(kc, ns.name);
  const { lambda: lambdaOptions, egressAllow: _allowed, ...runtimeOptions } = options;
  const lambda =
    lambdaOptions === undefined
      ? undefined
      : await prepareLambdaFunctions({
          installationNamespace: installation.name,
          tenancy: { tenantNamespaces: [ns.name], defaultServiceAccount: TENANT_DEPLOYER, egressAllow },
          ...lambdaOptions,
        });
  let lambdaFunctions: LambdaFunctions | undefined;
  const startRuntime = () =>
    startConvoyRuntime({
      kc,
      logger,
      namespace: installation.name,
      awsPort: 0,
      onlyNamespaces: [ns.name],
      identities,
      settings: identities.settings,
      ...(lambda === undefined
        ? {}
        : {
            visibilityTimeoutSeconds: lambda.queue.visibilityTimeoutSeconds,
            ...(lambda.queue.maxReceiveCount !== undefined
              ? { maxReceiveCount: lambda.queue.maxReceiveCount }
              : {}),
            functions: async (context) => (lambdaFunctions = await lambda.start(context)),
          }),
      ...runtimeOptions,
    });
  let runtime = await startRuntime();
  await until('the relay leads and has listed', () => runtime.relay.ready() && runtime.relay.leading(), {
    timeoutMs: 30_000,
  });
  const coordination = kc.makeApiClient(CoordinationV1Api);

  return {
    kc,
    ns,
    installation,
    functionsKc: identities.functions,
    get runtime() {
      return runtime;
    },
    git,
    api,
    logs,
    async repo(name, files) {
      const { commit } = await createRepo(gitRoot, name, files);
      return { url: `${git.url}/${name}.git`, commit };
    },
    commit: (name, files) => commitFiles(gitRoot, name, files),
    async createRelease(name, spec) {
      await api.create('Release', ns.name, name, {
        cluster: { name: 'local' },
        targetNamespace: ns.name,
        ...spec,
      });
      return api.getRelease(ns.name, name);
    },
    getRelease: (name) => api.getRelease(ns.name, name),
    async deleteRelease(name) {
      await api.raw.deleteNamespacedCustomObject({
        group: API_GROUP,
        version: API_VERSION,
        namespace: ns.name,
        plural: 'releases',
        name,
      });
    },
    recordLines(name, filter = {}) {
      return logs.filter(
        (line) =>
          line['namespace'] === ns.name &&
          line['name'] === name &&
          line['messageId'] !== undefined &&
          line['loop'] === (filter.loop ?? 'reconcile') &&
          (filter.messageId === undefined || line['messageId'] === filter.messageId) &&
          (filter.msg === undefined || line.msg === filter.msg),
      );
    },
    async sendRaw(loop, bodies) {
      const out = await runtime.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: runtime.queues[loop].queueUrl,
          Entries: bodies.map((body, i) => ({ Id: `e${i}`, MessageBody: body })),
        }),
      );
      if ((out.Failed ?? []).length > 0)
        throw new Error(`SendMessageBatch failed: ${JSON.stringify(out.Failed)}`);
      return bodies.map((_, i) => {
        const id = out.Successful?.find((s) => s.Id === `e${i}`)?.MessageId;
        if (id === undefined) throw new Error(`SendMessageBatch returned no MessageId for entry e${i}`);
        return id;
      });
    },
    messageBody(name, uid, cause, loop = 'reconcile') {
      const message: QueueMessage = {
        v: 1,
        loop,
        namespace: ns.name,
        name,
        uid,
        cause,
        sentAt: new Date().toISOString(),
      };
      return JSON.stringify(message);
    },
    async lease(uid, loop = 'reconcile') {
      try {
        return await coordination.readNamespacedLease({
          name: leaseName(loop, uid),
          namespace: installation.name,
        });
      } catch (error) {
        if (error instanceof ApiException && error.code === 404) return undefined;
        throw error;
      }
    },
    async dlqMessages(loop) {
      const { Messages = [] } = await runtime.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: runtime.queues[loop].dlqUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          VisibilityTimeout: 60,
          MessageSystemAttributeNames: ['All'],
          // A copy the function sent names the message it copies (adapters/sqs/dead-letter.ts).
          MessageAttributeNames: ['All'],
        }),
      );
      return Messages;
    },
    async queueDepth(loop) {
      const { Attributes = {} } = await runtime.sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: runtime.queues[loop].queueUrl, AttributeNames: ['All'] }),
      );
      return {
        visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
        inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
        delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
      };
    },
    lambda: () => lambdaFunctions,
    async restart() {
      await runtime.stop();
      runtime = await startRuntime();
      await until(
        'the restarted relay leads and has listed',
        () => runtime.relay.ready() && runtime.relay.leading(),
        { timeoutMs: 30_000 },
      );
    },
    async close() {
      await runtime.stop();
      await lambda?.dispose();
      await identities.remove();
      await removeDeployer();
      await git.stop();
      await ns.delete();
      await installation.delete();
      await rm(gitRoot, { recursive: true, force: true });
    },
  };
}
