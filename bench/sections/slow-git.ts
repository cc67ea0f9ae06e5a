// slowGit: a Git server that answers slowly (5 s per request) for one repository must not slow
// the Releases of other repositories (bad input). The `convoy dev` runtime (relay,
// pollers calling the real function handlers) against the bench's cluster; the Git server sits
// behind a proxy that delays every request for `slow.git` (bench/lib/slow-proxy.ts).
// - alone: F Releases of a fast repository, created at once: create → Applied per Release;
// - withSlow: S Releases of the slow repository created first, then F Releases of another fast
//   repository with the same content (so neither phase finds the other's cache): the same times.
// Target: the fast Releases' p50 and max with the slow ones present within 1.5× + 1 s of alone.
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
import { conditionTrue, watchCondition } from '../lib/condition-watch.ts';
import { startSlowProxy } from '../lib/slow-proxy.ts';
import { percentile } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';
import { appFiles } from './per-release.ts';

export const SLOW_GIT_DELAY_MS = 5_000;

interface Times {
  p50Ms: number;
  maxMs: number;
}

export async function benchSlowGit(
  kc: KubeConfig,
  options: { fast: number; slow: number },
): Promise<Record<string, unknown>> {
  const run = Date.now().toString(36);
  const gitRoot = await mkdtemp(join(tmpdir(), 'convoy-bench-slowgit-'));
  for (const repo of ['fast-a', 'fast-b', 'slow']) await createRepo(gitRoot, repo, appFiles('app'));
  const git = await startGitHttpServer({ projectRoot: gitRoot });
  const proxy = await startSlowProxy(git.url, { slowPrefixes: ['/slow.git'], delayMs: SLOW_GIT_DELAY_MS });
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const namespaces = (label: string, n: number) =>
    Array.from({ length: n }, (_, i) => `slowgit-${run}-${label}-${i}`);
  const groups = {
    alone: namespaces('a', options.fast),
    slow: namespaces('s', options.slow),
    withSlow: namespaces('b', options.fast),
  };
  const all = [...groups.alone, ...groups.slow, ...groups.withSlow];
  const object = convoyObject;
  await createAppNamespaces(kc, all);
  const logger = createLogger({
    base: { bench: 'slowGit' },
    level: 'error',
    write: (l) => void process.stderr.write(`${l}\n`),
  });
  const runtime = await startConvoyRuntime({
    kc,
    logger,
    namespace: `slowgit-${run}-system`,
    onlyNamespaces: all,
  });
  const watch = await watchCondition(
    kc,
    `/apis/${API_GROUP}/${API_VERSION}/releases`,
    (o) => conditionTrue(o, 'Applied'),
    (e) => log(`slowGit: watch: ${String(e)}`),
  );
  const createdAt = new Map<string, number>();
  const create = (repo: string, list: readonly string[]) =>
    inPool(list, 8, async (namespace) => {
      createdAt.set(namespace, Date.now());
      await custom.createNamespacedCustomObject(
        object('Release', namespace, {
          cluster: { name: 'local' },
          source: { git: { url: `${proxy.url}/${repo}.git`, ref: { branch: 'main' }, path: 'app' } },
        }),
      );
    });
  const timesOf = (list: readonly string[]): Times => {
    const ms = list.map(
      (ns) => (watch.reachedAt.get(`${ns}/app`) ?? Number.NaN) - (createdAt.get(ns) ?? Number.NaN),
    );
    return { p50Ms: percentile(ms, 50) ?? Number.NaN, maxMs: percentile(ms, 100) ?? Number.NaN };
  };
  try {
    while (!runtime.relay.ready()) await new Promise((r) => setTimeout(r, 50));
    log(`slowGit: ${options.fast} fast Releases alone`);
    // The watch sees every Release of the cluster (earlier sections' too): wait for these by name.
    const reached = (list: readonly string[]) => list.every((ns) => watch.reachedAt.has(`${ns}/app`));
    await create('fast-a', groups.alone);
    const aloneDeadline = Date.now() + 120_000;
    while (!reached(groups.alone) && Date.now() < aloneDeadline) await new Promise((r) => setTimeout(r, 200));
    const alone = timesOf(groups.alone);
    log(`slowGit: ${options.slow} slow Releases, then ${options.fast} fast ones`);
    await create('slow', groups.slow);
    await create('fast-b', groups.withSlow);
    const deadline = Date.now() + 180_000;
    while (!(reached(groups.withSlow) && reached(groups.slow)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    const withSlow = timesOf(groups.withSlow);
    const slow = timesOf(groups.slow);
    // What the slow ones say when they did not make it.
    const slowApplied: Record<string, number> = {};
    for (const ns of groups.slow) {
      const c = watch.latest.get(`${ns}/app`)?.status?.conditions?.find((x) => x.type === 'Applied');
      const k = `${c?.status ?? 'none'} ${c?.reason ?? ''}: ${(c?.message ?? '').replace(/sha256:[0-9a-f]{64}/g, 'sha256:…').slice(0, 200)}`;
      slowApplied[k] = (slowApplied[k] ?? 0) + 1;
    }
    const within = (a: number, b: number) => a <= 1.5 * b + 1_000;
    return {
      delayPerRequestMs: SLOW_GIT_DELAY_MS,
      fastReleases: options.fast,
      slowReleases: options.slow,
      fastAlone: alone,
      fastWithSlowPresent: withSlow,
      slowRepository: { ...slow, applied: slowApplied },
      slowRequestsDelayed: proxy.delayed(),
      target: 'fast Releases with the slow repository present: p50 and max within 1.5× + 1 s of alone',
      met: within(withSlow.p50Ms, alone.p50Ms) && within(withSlow.maxMs, alone.maxMs),
    };
  } finally {
    watch.stop();
    await runtime.stop();
    await proxy.stop();
    await git.stop();
    await rm(gitRoot, { recursive: true, force: true });
    for (const ns of all) await core.deleteNamespace({ name: ns }).catch(() => undefined);
  }
}
