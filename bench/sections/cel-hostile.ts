// celHostile: a Release whose health checks are hostile must not slow the
// others. The `convoy dev` runtime (relay, pollers calling the real function handlers, one
// process) against the bench's cluster, as slowGit runs it:
// - alone: F Releases of an ordinary app, created one a second: create → Applied per Release;
// - withHostile: H hostile Releases first — each renders 20 ConfigMaps holding 5,000 'a' and
//   '!', with checks `matches('^(a+)+$')` (117 s per object on b1e28ad's JavaScript RegExp) and
//   10^6 nested comprehension iterations (over the cost budget), assessed every 5 s — and, once
//   the health loop has assessed them, F more ordinary Releases (another repository), one a
//   second: the same times while the health loop keeps running the hostile checks.
// Target: the ordinary Releases' p50 and p99 with the hostile ones present within 1.5× + 1 s of
// alone (as slowGit's).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { startGitHttpServer } from '../../dev/git-http-server.ts';
import { startConvoyRuntime } from '../../dev/runtime.ts';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { createLogger } from '../../platform/logger.ts';
import { createRepo } from '../../test/harness/git-fixtures.ts';
import { inPool } from '../flux/side-process.ts';
import { convoyObject, createAppNamespaces } from '../lib/app-namespaces.ts';
import { conditionTrue, watchCondition, type WatchedObject } from '../lib/condition-watch.ts';
import { percentile } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';
import { appFiles } from './per-release.ts';

const HOSTILE_OBJECTS = 20;
const TEN = '[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]';
const NESTED6 = Array.from({ length: 6 }, (_, i) => `v${i}`).reduceRight(
  (inner, v) => `${TEN}.all(${v}, ${inner})`,
  'v0 + v5 > 0',
);

function hostileFiles(): Record<string, string> {
  const value = `${'a'.repeat(5_000)}!`;
  const docs = Array.from(
    { length: HOSTILE_OBJECTS },
    (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: attack-${i}}\ndata: {value: "${value}"}\n`,
  );
  return { 'app/attack.yaml': docs.join('---\n') };
}

const HOSTILE_HEALTH = {
  interval: '5s',
  checks: [
    { apiVersion: 'v1', kind: 'ConfigMap', healthy: "object.data.value.matches('^(a+)+$')" },
    { apiVersion: 'v1', kind: 'ConfigMap', healthy: NESTED6 },
  ],
};

interface Times {
  p50Ms: number;
  p99Ms: number;
}

const healthAssessed = (o: WatchedObject): boolean =>
  o.status?.conditions?.some((c) => c.type === 'Healthy' && c.reason !== 'Pending') === true;

export async function benchCelHostile(
  kc: KubeConfig,
  options: { ordinary: number; hostile: number; spacingMs: number },
): Promise<Record<string, unknown>> {
  const run = Date.now().toString(36);
  const gitRoot = await mkdtemp(join(tmpdir(), 'convoy-bench-celhostile-'));
  for (const repo of ['fast-a', 'fast-b']) await createRepo(gitRoot, repo, appFiles('app'));
  await createRepo(gitRoot, 'hostile', hostileFiles());
  const git = await startGitHttpServer({ projectRoot: gitRoot });
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const namespaces = (label: string, n: number) =>
    Array.from({ length: n }, (_, i) => `celhostile-${run}-${label}-${i}`);
  const groups = {
    alone: namespaces('a', options.ordinary),
    hostile: namespaces('h', options.hostile),
    withHostile: namespaces('b', options.ordinary),
  };
  const all = [...groups.alone, ...groups.hostile, ...groups.withHostile];
  const object = convoyObject;
  await createAppNamespaces(kc, all);
  const logger = createLogger({
    base: { bench: 'celHostile' },
    level: 'error',
    write: (l) => void process.stderr.write(`${l}\n`),
  });
  const runtime = await startConvoyRuntime({
    kc,
    logger,
    namespace: `celhostile-${run}-system`,
    onlyNamespaces: all,
  });
  const path = `/apis/${API_GROUP}/${API_VERSION}/releases`;
  const applied = await watchCondition(
    kc,
    path,
    (o) => conditionTrue(o, 'Applied'),
    (e) => log(`celHostile: watch: ${String(e)}`),
    healthAssessed,
  );
  const createdAt = new Map<string, number>();
  const create = (list: readonly string[], spec: (namespace: string) => Record<string, unknown>) =>
    inPool(list, 8, async (namespace) => {
      createdAt.set(namespace, Date.now());
      await custom.createNamespacedCustomObject(object('Release', namespace, spec(namespace)));
    });
  // Ordinary Releases arrive one every spacingMs, so their reconciles overlap several of the
  // hostile Releases' 5-s health assessments rather than the few seconds after the first.
  const createSpaced = async (
    list: readonly string[],
    spec: (namespace: string) => Record<string, unknown>,
  ) => {
    for (const namespace of list) {
      createdAt.set(namespace, Date.now());
      await custom.createNamespacedCustomObject(object('Release', namespace, spec(namespace)));
      await new Promise((r) => setTimeout(r, options.spacingMs));
    }
  };
  const ordinary = (repo: string) => () => ({
    cluster: { name: 'local' },
    source: { git: { url: `${git.url}/${repo}.git`, ref: { branch: 'main' }, path: 'app' } },
  });
  const timesOf = (list: readonly string[]): Times => {
    const ms = list.map(
      (ns) => (applied.reachedAt.get(`${ns}/app`) ?? Number.NaN) - (createdAt.get(ns) ?? Number.NaN),
    );
    return { p50Ms: percentile(ms, 50) ?? Number.NaN, p99Ms: percentile(ms, 99) ?? Number.NaN };
  };
  const waitFor = async (done: () => boolean, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  };
  try {
    while (!runtime.relay.ready()) await new Promise((r) => setTimeout(r, 50));
    log(`celHostile: ${options.ordinary} ordinary Releases alone`);
    await createSpaced(groups.alone, ordinary('fast-a'));
    await waitFor(() => groups.alone.every((ns) => applied.reachedAt.has(`${ns}/app`)), 120_000);
    const alone = timesOf(groups.alone);
    log(`celHostile: ${options.hostile} hostile Releases, then ${options.ordinary} ordinary ones`);
    await create(groups.hostile, () => ({ ...ordinary('hostile')(), healthAssessment: HOSTILE_HEALTH }));
    await waitFor(() => groups.hostile.every((ns) => applied.alsoReachedAt.has(`${ns}/app`)), 120_000);
    const hostileAssessedAt = Date.now();
    await createSpaced(groups.withHostile, ordinary('fast-b'));
    await waitFor(() => groups.withHostile.every((ns) => applied.reachedAt.has(`${ns}/app`)), 180_000);
    const withHostile = timesOf(groups.withHostile);
    const hostileHealthy: Record<string, number> = {};
    for (const ns of groups.hostile) {
      const c = applied.latest.get(`${ns}/app`)?.status?.conditions?.find((x) => x.type === 'Healthy');
      const k = `${c?.status ?? 'none'} ${c?.reason ?? ''}: ${(c?.message ?? '').slice(0, 240)}`;
      hostileHealthy[k] = (hostileHealthy[k] ?? 0) + 1;
    }
    const within = (a: number, b: number) => a <= 1.5 * b + 1_000;
    return {
      ordinaryReleases: options.ordinary,
      ordinaryCreatedEveryMs: options.spacingMs,
      hostileReleases: options.hostile,
      hostileObjectsEach: HOSTILE_OBJECTS,
      hostileChecks: HOSTILE_HEALTH.checks.map((c) =>
        c.healthy.length > 60 ? `${c.healthy.slice(0, 60)}…` : c.healthy,
      ),
      ordinaryAlone: alone,
      ordinaryWithHostile: withHostile,
      hostileAssessedBeforeOrdinary: groups.hostile.every(
        (ns) => (applied.alsoReachedAt.get(`${ns}/app`) ?? Infinity) <= hostileAssessedAt,
      ),
      hostileHealthy,
      target:
        'ordinary Releases with hostile health checks running: p50 and p99 create → Applied within 1.5× + 1 s of alone',
      met: within(withHostile.p50Ms, alone.p50Ms) && within(withHostile.p99Ms, alone.p99Ms),
    };
  } finally {
    applied.stop();
    await runtime.stop();
    await git.stop();
    await rm(gitRoot, { recursive: true, force: true });
    for (const ns of all) await core.deleteNamespace({ name: ns }).catch(() => undefined);
  }
}
