// The examples/ a newcomer applies with `convoy dev` reach the combined verdict Ready (Applied,
// InSync, Healthy and RolloutSucceeded True) by themselves, through the real runtime (relay → SQS →
// functions), the Git server convoy dev runs for examples/repos, and the embedded cluster's real
// controllers and simulated nodes: waves, a PreSync hook Job and health assessments included.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  KubernetesObjectApi,
  PatchStrategy,
  loadAllYaml,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Release } from '../../domain/api/objects.ts';
import { combinedVerdict } from '../../domain/status/verdict.ts';
import { EXAMPLES_NAMESPACE, provideExampleSources } from '../../dev/dev-examples.ts';
import { buildExampleRepos } from '../../dev/example-repos.ts';
import { startGitHttpServer, type GitHttpServer } from '../../dev/git-http-server.ts';
import { startConvoyRuntime, type ConvoyRuntime } from '../../dev/runtime.ts';
import { createLogger } from '../../platform/logger.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi } from '../harness/releases.ts';
import { until } from '../harness/runtime-env.ts';

const examplesDir = join(import.meta.dirname, '..', '..', 'examples');

describe('examples/ with the convoy dev runtime', () => {
  const kc = kubeConfigFor(inject('kubeconfigPath'));
  let ns: FreshNamespace;
  let installation: FreshNamespace;
  let git: GitHttpServer;
  let runtime: ConvoyRuntime;
  let repos: Awaited<ReturnType<typeof buildExampleRepos>>;

  beforeAll(async () => {
    ns = await freshNamespace(kc, 'examples');
    installation = await freshNamespace(kc, 'examples-system');
    repos = await buildExampleRepos(join(examplesDir, 'repos'));
    git = await startGitHttpServer({ projectRoot: repos.root });
    // What convoy dev does at start: a GitRepository per example repo, at its Git server's address.
    await provideExampleSources(kc, git.url, repos.names, ns.name);
    runtime = await startConvoyRuntime({
      kc,
      logger: createLogger({ base: { test: 'examples' }, level: 'error' }),
      namespace: installation.name,
      onlyNamespaces: [ns.name],
      relayTickMs: 200,
    });
  });
  afterAll(async () => {
    await runtime.stop();
    await git.stop();
    await repos.remove();
    await ns.delete();
    await installation.delete();
  });

  it(
    'every example applies as written (only its namespace renamed) and every Release becomes Ready by itself',
    { timeout: 180_000 },
    async () => {
      const objects = KubernetesObjectApi.makeApiClient(kc);
      const names: string[] = [];
      const appliedAt = Date.now();
      for (const file of (await readdir(examplesDir)).filter((f) => f.endsWith('.yaml')).sort()) {
        const text = (await readFile(join(examplesDir, file), 'utf8')).replaceAll(
          EXAMPLES_NAMESPACE,
          ns.name,
        );
        for (const doc of loadAllYaml(text) as KubernetesObject[]) {
          if (doc.kind === 'Namespace') continue;
          await objects.patch(doc, undefined, undefined, 'kubectl', true, PatchStrategy.ServerSideApply);
          if (doc.kind === 'Release' && doc.metadata?.name) names.push(doc.metadata.name);
        }
      }
      expect(names.sort()).toEqual(['guestbook', 'hello']);
      const api = convoyApi(kc);
      // Safety net only (≥ 3× the ~22 s it takes on a quiet 2-core machine): how fast is not this test's question.
      const ready = await until(
        'every example Release is Ready (Applied, InSync, Healthy and RolloutSucceeded True)',
        async () => {
          const releases = await Promise.all(names.map((n) => api.getRelease(ns.name, n)));
          return releases.every((r) => combinedVerdict(r).ready) ? releases : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 250 },
      );
      const readyMs = Date.now() - appliedAt;
      process.stderr.write(`examples: every Release Ready ${readyMs} ms after the apply\n`);

      const status = (r: Release, type: string) => r.status?.conditions?.find((c) => c.type === type);
      for (const r of ready) {
        for (const type of ['Applied', 'InSync', 'Healthy', 'RolloutSucceeded'])
          expect(status(r, type)).toMatchObject({ status: 'True' });
        // Healthy is assessed (healthAssessment is set), not NotConfigured.
        expect(status(r, 'Healthy')?.reason).toBe('Healthy');
        expect(combinedVerdict(r)).toMatchObject({ ready: true, health: 'Assessed' });
      }
      const [guestbook, hello] = ready as [Release, Release];
      expect(hello.status?.waves?.map((w) => [w.wave, w.state])).toEqual([
        [0, 'Healthy'],
        [1, 'Healthy'],
      ]);
      // The PreSync hook Job ran to completion through the real Job controller.
      expect(guestbook.status?.lifecycle?.hooks?.[0]).toMatchObject({
        name: 'migrate',
        phase: 'PreSync',
        state: 'Succeeded',
      });
      expect(status(guestbook, 'LifecycleSucceeded')).toMatchObject({ status: 'True', reason: 'Succeeded' });
    },
  );
});
