// The examples/ a newcomer applies with `convoy dev` reach Applied, InSync and
// Healthy through the real runtime (relay → SQS → functions), with the Git
// server convoy dev runs for examples/repos.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubernetesObjectApi, PatchStrategy, loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildExampleRepos } from '../../dev/example-repos.ts';
import { startGitHttpServer, type GitHttpServer } from '../../dev/git-http-server.ts';
import { startConvoyRuntime, type ConvoyRuntime } from '../../dev/runtime.ts';
import { createLogger } from '../../functions/runtime/logger.ts';
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

  it('every example applies as written (namespace and Git URL aside) and the Release becomes Applied, InSync and Healthy', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    for (const file of (await readdir(examplesDir)).filter((f) => f.endsWith('.yaml')).sort()) {
      const text = (await readFile(join(examplesDir, file), 'utf8'))
        .replaceAll('convoy-examples', ns.name)
        .replaceAll('http://127.0.0.1:8481', git.url);
      for (const doc of loadAllYaml(text) as KubernetesObject[]) {
        if (doc.kind === 'Namespace') continue;
        await objects.patch(doc, undefined, undefined, 'kubectl', true, PatchStrategy.ServerSideApply);
      }
    }
    const api = convoyApi(kc);
    const release = await until(
      'the example Release is Applied, InSync and Healthy',
      async () => {
        const r = await api.getRelease(ns.name, 'hello');
        const status = (type: string) => r.status?.conditions?.find((c) => c.type === type)?.status;
        return status('Applied') === 'True' && status('InSync') === 'True' && status('Healthy') === 'True' ? r : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(release.status?.lastAttempted?.resolvedSource?.git?.url).toBe(`${git.url}/hello.git`);
    expect(release.status?.waves?.map((w) => w.wave)).toEqual([0, 1]);
  });
});
