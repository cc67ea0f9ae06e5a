/**
 * The same scenario through the in-process runtime and through the functions as Lambda runs them
 * (dev/lambda: the construct's bundles under the emulator, fed by event source mappings with the
 * template's settings): a first deploy, a failing source retried with backoff, a drift corrected
 * (driftDetection Correct) and a health change (an object deleted → Healthy False / Missing). The
 * conditions (type, status, reason) each runtime reaches must be identical.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, inject, it } from 'vitest';
import type { Release } from '../../domain/api/objects.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: {k: v}\n`;
type Conditions = Record<string, string>;
const conditions = (release: Release): Conditions =>
  Object.fromEntries((release.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));

async function scenario(env: RuntimeEnv): Promise<Record<string, Conditions>> {
  const core = env.kc.makeApiClient(CoreV1Api);
  const ns = env.ns.name;
  const seen: Record<string, Conditions> = {};
  const reach = async (name: string, what: string, want: (c: Conditions) => boolean): Promise<Conditions> =>
    until(
      `${name}: ${what}`,
      async () => {
        const c = conditions(await env.getRelease(name));
        return want(c) ? c : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );

  // 1. First deploy.
  const repo = await env.repo('parity', {
    'app/cm.yaml': configMap('parity-cfg'),
    'health/cm.yaml': configMap('parity-health-cfg'),
  });
  await env.createRelease('deploy', {
    source: { git: { url: repo.url, ref: { branch: 'main' }, path: 'app' } },
    driftDetection: { interval: '5s', mode: 'Correct' },
    healthAssessment: { interval: '5s' },
  });
  seen['firstDeploy'] = await reach(
    'deploy',
    'Applied, InSync, Healthy',
    (c) =>
      c['Applied'] === 'True/Applied' &&
      c['InSync']?.startsWith('True') === true &&
      c['Healthy']?.startsWith('True') === true,
  );

  // 2. A failing source, retried with backoff.
  await env.createRelease('failing', {
    source: { git: { url: repo.url, ref: { branch: 'no-such-branch' } } },
    syncPolicy: { retryBackoff: { initial: '1s', factor: 2, max: '1m' } },
  });
  // All three writers speak for a Release whose source never resolves: reconcile (Applied False),
  // health (Healthy True/NotConfigured: no assessment asked for) and drift (InSync Unknown/Pending:
  // nothing applied). Waiting for Applied alone snapshot whichever observers had written by then —
  // in CI at f8f7873 the emulator's health run had not yet.
  seen['failing'] = await reach(
    'failing',
    'Applied False, Healthy and InSync written',
    (c) =>
      c['Applied']?.startsWith('False') === true && c['Healthy'] !== undefined && c['InSync'] !== undefined,
  );

  // 3. Drift corrected: another writer changes the ConfigMap; Correct re-applies the render.
  await core.patchNamespacedConfigMap({
    name: 'parity-cfg',
    namespace: ns,
    body: [{ op: 'replace', path: '/data/k', value: 'changed' }],
  });
  await until(
    'the ConfigMap is corrected',
    async () =>
      (await core.readNamespacedConfigMap({ name: 'parity-cfg', namespace: ns })).data?.['k'] === 'v' ||
      undefined,
    { timeoutMs: 90_000, intervalMs: 250 },
  );
  seen['driftCorrected'] = await reach(
    'deploy',
    'InSync True again',
    (c) => c['InSync']?.startsWith('True') === true,
  );

  // 4. A health change: an object of a Detect-mode Release deleted.
  await env.createRelease('health', {
    source: { git: { url: repo.url, ref: { branch: 'main' }, path: 'health' } },
    driftDetection: { interval: '5s' },
    healthAssessment: { interval: '5s' },
  });
  await reach(
    'health',
    'Healthy True',
    (c) => c['Healthy']?.startsWith('True') === true && c['Applied'] === 'True/Applied',
  );
  await core.deleteNamespacedConfigMap({ name: 'parity-health-cfg', namespace: ns });
  seen['healthChange'] = await reach(
    'health',
    'Healthy False',
    (c) => c['Healthy']?.startsWith('False') === true && c['InSync']?.startsWith('False') === true,
  );
  return seen;
}

describe('the same scenario in-process and under the Lambda runtime', () => {
  const envs: RuntimeEnv[] = [];
  afterAll(async () => {
    for (const env of envs) await env.close();
  });

  it('reaches identical conditions: first deploy, failing with retries, drift corrected, health change', async () => {
    const kc = kubeConfigFor(inject('kubeconfigPath'));
    const inProcess = await startRuntimeEnv(kc, 'parity-inproc', { relayTickMs: 200 });
    envs.push(inProcess);
    const expected = await scenario(inProcess);
    await inProcess.close();
    envs.pop();

    const lambda = await startRuntimeEnv(kc, 'parity-lambda', {
      relayTickMs: 200,
      lambda: { props: { maxConcurrency: 2 }, waitTimeSeconds: 1 },
    });
    envs.push(lambda);
    const actual = await scenario(lambda);
    console.info(`parity: ${JSON.stringify(actual)}`);
    expect(actual).toEqual(expected);
    expect(expected['healthChange']?.['Healthy']).toBe('False/Missing');
    expect((lambda.lambda()?.invocations() ?? []).some((i) => i.loop === 'drift')).toBe(true);
  }, 480_000);
});
