// largeRelease: one Release of 10,000 ConfigMaps reconciled end to end through
// the reconcile function's record handler (render from Git, dry run, render store write, apply,
// status) against the real API server, in a process of its own (bench/lib/large-release-child.ts)
// so that its peak RSS is the reconcile's alone. Three runs: the first deploy, the same render
// again (nothing changed: the interval tick of a large Release), and a render over the
// installation's object limit (ends DeployFailed at Rendering, nothing applied).
// Targets: each run within half the reconcile function's defaults (300 s timeout, 1024 MB), and
// status shows the apply's progress (phase Syncing with counts) while the first run is under way.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../domain/api/group-version.ts';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS } from '../../domain/runtime/timings.ts';
import { DEFAULT_MEMORY_MB } from '../../infra/convoy-props.ts';
import type { FixtureFiles } from '../../test/harness/git-fixtures.ts';
import { startReconcileEnv, type ReconcileEnv } from '../../test/harness/reconcile-env.ts';
import { measureRequests, type RequestSummary } from '../lib/apiserver-metrics.ts';
import type { ClientRequestCounter } from '../lib/client-requests.ts';
import {
  tenancyJson,
  type LargeReleaseChildInput,
  type LargeReleaseChildResult,
} from '../lib/large-release-input.ts';
import { log } from '../lib/stdout.ts';

const run = promisify(execFile);
const RELEASE = 'large';
const PER_FILE = 1_000;
const PROGRESS_INTERVAL_MS = 10_000;

export interface LargeReleaseOptions {
  objects: number;
}

/** One status the watch saw while a run was under way. */
interface StatusSeen {
  atMs: number;
  phase: string | undefined;
  progress: unknown;
  applied: string | undefined;
}

interface RunReport extends LargeReleaseChildResult {
  applied: { status: string | undefined; reason: string | undefined; message: string | undefined };
  phase: string | undefined;
  apiserver: RequestSummary;
  /** Status updates the watch saw during the run with phase Syncing (progress). */
  progressSeen: StatusSeen[];
}

/** N ConfigMaps in files of 1,000 (a file stays far below the 10 MiB manifest limit). */
function configMapFiles(n: number): FixtureFiles {
  const files: FixtureFiles = {};
  for (let start = 0; start < n; start += PER_FILE) {
    const docs: string[] = [];
    for (let i = start; i < Math.min(n, start + PER_FILE); i++) {
      docs.push(`apiVersion: v1
kind: ConfigMap
metadata:
  name: cm-${String(i).padStart(6, '0')}
  labels: {app.kubernetes.io/name: large, tier: config}
data:
  LOG_LEVEL: info
  FEATURE_FLAGS: "a,b,c"
  settings.json: '{"index": ${i}, "replicas": 3, "timeoutSeconds": 30}'
`);
    }
    files[`app/cm-${String(start / PER_FILE).padStart(3, '0')}.yaml`] = docs.join('---\n');
  }
  return files;
}

export async function benchLargeRelease(
  kc: KubeConfig,
  client: ClientRequestCounter,
  root: string,
  options: LargeReleaseOptions,
): Promise<Record<string, unknown>> {
  const env = await startReconcileEnv(kc, 'bench-large');
  const cacheDir = await mkdtemp(join(tmpdir(), 'convoy-large-cache-'));
  try {
    const n = options.objects;
    log(`largeRelease: a Git repo of ${n} ConfigMaps`);
    const repo = await env.repo('large', configMapFiles(n));
    await env.api.create('Release', env.ns.name, RELEASE, {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { git: { url: repo.url, ref: { branch: 'main' }, path: 'app' } },
    });
    const endpoint = await env.s3.config.endpoint?.();
    if (endpoint === undefined) throw new Error('the harness S3 client has no endpoint');
    const s3Endpoint = `${endpoint.protocol}//${endpoint.hostname}${endpoint.port !== undefined ? `:${endpoint.port}` : ''}`;
    const f = env.functionsConfig;
    const base: Omit<LargeReleaseChildInput, 'uid' | 'maxRenderObjects'> = {
      kube: {
        server: f.server,
        ca: f.ca,
        cert: f.cert,
        key: f.key,
        token: f.bearerToken(),
        insecureSkipTlsVerify: f.insecureSkipTlsVerify,
        tlsServerName: f.tlsServerName,
      },
      s3: { endpoint: s3Endpoint, bucket: env.bucket },
      namespace: env.ns.name,
      name: RELEASE,
      cacheDir,
      tenancy: tenancyJson(env.tenancy),
      progressIntervalMs: PROGRESS_INTERVAL_MS,
    };

    const once = async (label: string, maxRenderObjects: number): Promise<RunReport> => {
      log(`largeRelease: ${label}`);
      const uid = (await env.api.getRelease(env.ns.name, RELEASE)).metadata.uid ?? '';
      const seen = await watchStatus(kc, env);
      try {
        const measured = await measureRequests(kc, client, () =>
          runChild(root, { ...base, uid, maxRenderObjects }),
        );
        const release = await env.api.getRelease(env.ns.name, RELEASE);
        const applied = release.status?.conditions?.find((c) => c.type === 'Applied');
        return {
          ...measured.value,
          applied: {
            status: applied?.status,
            reason: applied?.reason,
            message: applied?.message?.slice(0, 300),
          },
          phase: release.status?.lastAttempted?.phase,
          apiserver: measured.apiserver,
          progressSeen: seen.all().filter((s) => s.phase === 'Syncing'),
        };
      } finally {
        seen.stop();
      }
    };

    const first = await once(`first deploy of ${n} objects`, n);
    const second = await once(`the same ${n} objects again (nothing changed)`, n);
    const overLimit = await once(`a render of ${n} objects over a limit of ${n - 1}`, n - 1);

    const timeoutMs = DEFAULT_FUNCTION_TIMEOUT_SECONDS * 1000;
    const memoryMiB = DEFAULT_MEMORY_MB.reconcile;
    const within = (r: RunReport) => r.wallMs <= timeoutMs / 2 && r.maxRssMiB <= memoryMiB / 2;
    const met =
      first.applied.reason === 'Applied' &&
      second.applied.reason === 'Applied' &&
      overLimit.applied.reason === 'DeployFailed' &&
      overLimit.apiserver.objectWrites === 0 &&
      within(first) &&
      within(second) &&
      first.progressSeen.length > 0;
    return {
      objects: n,
      targets: {
        eachRun: {
          wallMs: timeoutMs / 2,
          maxRssMiB: memoryMiB / 2,
          note: `half the reconcile function's defaults (timeout ${DEFAULT_FUNCTION_TIMEOUT_SECONDS} s, memory ${memoryMiB} MB): the margin for a slower Lambda CPU (1024 MB is ~0.6 vCPU) and helm/kubectl children`,
        },
        progress: `phase Syncing with counts in status at least once during the first deploy (interval ${PROGRESS_INTERVAL_MS / 1000} s)`,
        overLimit: 'Applied False/DeployFailed at Rendering naming the limit, no object written',
      },
      met,
      firstDeploy: first,
      unchanged: second,
      overLimit,
      notes: [
        'the reconcile runs in a child process: maxRssMiB is its peak resident set (VmHWM), what the function memory limits; the bench host runs the API server, etcd and the bench on the same CPUs',
        "apiserver: apiserver_request_total growth during the run (the bench's own status watch included, as WATCH)",
      ],
    };
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
    await env.close();
  }
}

async function runChild(root: string, input: LargeReleaseChildInput): Promise<LargeReleaseChildResult> {
  const { stdout } = await run(process.execPath, [join(root, 'bench', 'lib', 'large-release-child.ts')], {
    env: { ...process.env, LARGE_RELEASE_CHILD: JSON.stringify(input) },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 15 * 60_000,
  });
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as LargeReleaseChildResult;
}

/** Every status update of the Release from now on, with the time since the watch started. */
async function watchStatus(
  kc: KubeConfig,
  env: ReconcileEnv,
): Promise<{ all(): StatusSeen[]; stop(): void }> {
  const seen: StatusSeen[] = [];
  const started = performance.now();
  const watch = new Watch(kc);
  const controller = await watch.watch(
    `/apis/${API_GROUP}/${API_VERSION}/namespaces/${env.ns.name}/releases`,
    { fieldSelector: `metadata.name=${RELEASE}` },
    (
      _type: string,
      obj: {
        status?: {
          lastAttempted?: { phase?: string; progress?: unknown };
          conditions?: { type: string; reason?: string }[];
        };
      },
    ) => {
      seen.push({
        atMs: Math.round(performance.now() - started),
        phase: obj.status?.lastAttempted?.phase,
        progress: obj.status?.lastAttempted?.progress,
        applied: obj.status?.conditions?.find((c) => c.type === 'Applied')?.reason,
      });
    },
    () => undefined,
  );
  return {
    all: () => [...seen],
    stop: () => controller.abort(),
  };
}
