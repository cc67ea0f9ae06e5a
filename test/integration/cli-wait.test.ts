/**
 * `convoy status` and `convoy wait` against the real stack: the convoy dev
 * runtime (relay → SQS → functions) and the real apiserver, the CLI run as a
 * child process with a kubeconfig, as a user would.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeConfigFor } from '../harness/kube.ts';
import { runConvoy, startConvoy } from '../harness/cli.ts';
import { appliedOf, startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';

const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata: {k: v}\n`;
const fastRetry = { syncPolicy: { retryBackoff: { initial: '1s', factor: 1, max: '1s' } } };

describe('convoy status and wait on the real stack', () => {
  const kubeconfig = inject('kubeconfigPath');
  let env: RuntimeEnv;

  beforeAll(async () => {
    env = await startRuntimeEnv(kubeConfigFor(kubeconfig), 'cli-wait', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  const git = (repo: string) => ({
    source: { git: { url: `${env.git.url}/${repo}.git`, ref: { branch: 'main' } } },
  });

  it(
    'wait keeps waiting through a retried SourceNotReady and exits 0 once the source appears and the Release is Ready',
    { timeout: 150_000 },
    async () => {
      await env.createRelease('late', { ...git('late'), ...fastRetry });
      const waiting = startConvoy(['wait', `${env.ns.name}/late`, '--timeout', '90s'], kubeconfig);
      await until(
        'Applied is False SourceNotReady',
        async () => appliedOf(await env.getRelease('late'))?.reason === 'SourceNotReady',
        { timeoutMs: 30_000 },
      );
      await until(
        'wait reports the retried stop',
        () => waiting.stderr().includes('Retrying (Applied)') || waiting.exited(),
        { timeoutMs: 60_000 },
      );
      expect(waiting.exited()).toBe(false);
      await env.repo('late', { 'cm.yaml': configMap('late-config') });
      const run = await waiting.done;
      expect(run.stderr).toContain('Retrying (Applied)');
      expect(run.stderr).toContain('SourceNotReady');
      expect(run.stdout).toMatch(/^Ready/);
      expect(run.code).toBe(0);
      const status = await runConvoy(['status', 'late', '-n', env.ns.name, '-o', 'json'], kubeconfig);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ ready: true, health: 'NotConfigured' });
    },
  );

  it('wait exits 1 at once on Unsupported (a stop convoy does not retry)', { timeout: 400_000 }, async () => {
    await env.createRelease('ssh', {
      source: { git: { url: 'ssh://git@example.com/apps.git', ref: { branch: 'main' } } },
    });
    await until(
      'Applied is False Unsupported',
      async () => appliedOf(await env.getRelease('ssh'))?.reason === 'Unsupported',
      { timeoutMs: 30_000 },
    );
    const run = await runConvoy(['wait', `${env.ns.name}/ssh`, '--timeout', '10m'], kubeconfig);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^convoy: Failed \(Applied\): Applied is False \(Unsupported\)/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    // At once: far below the 10 m timeout (the time is Node's start on a busy machine), and no waiting line before.
    expect(run.ms).toBeLessThan(300_000);
  });

  it(
    'wait on a suspended Release exits 4 at once, in one line saying so and how to resume; that command resumes it and wait then ends Ready',
    { timeout: 300_000 },
    async () => {
      await env.createRelease('paused', { ...git('paused'), ...fastRetry });
      // Suspended while a wait runs (retrying: the repository does not exist yet): that wait ends at once too.
      const waiting = startConvoy(['wait', `${env.ns.name}/paused`, '--timeout', '10m'], kubeconfig);
      await until(
        'wait reports the retried stop',
        () => waiting.stderr().includes('Retrying (Applied)') || waiting.exited(),
        {
          timeoutMs: 60_000,
        },
      );
      expect(waiting.exited()).toBe(false);
      await env.api.patchMerge('Release', env.ns.name, 'paused', { spec: { suspend: true } });
      const during = await waiting.done;
      expect(during.code).toBe(4);
      expect(during.stdout).toBe('');
      expect(during.stderr.trim().split('\n').pop()).toMatch(
        new RegExp(`^convoy: ${env.ns.name}/paused is suspended \\(spec\\.suspend: true\\)`),
      );

      // A wait started on a suspended Release: one line, exit 4, no waiting line before it.
      await env.repo('paused', { 'cm.yaml': configMap('paused-config') });
      const run = await runConvoy(['wait', `${env.ns.name}/paused`, '--timeout', '10m'], kubeconfig);
      expect(run.code).toBe(4);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(
        `${env.ns.name}/paused is suspended (spec.suspend: true): convoy applies nothing until it is resumed`,
      );
      expect(run.stderr).toContain(
        `kubectl patch releases.convoy.dev paused -n ${env.ns.name} --type merge -p '{"spec":{"suspend":false}}'`,
      );
      expect(run.ms).toBeLessThan(300_000); // far below the 10-m timeout: Node's start on a busy machine

      // The command the line names resumes the Release; wait then follows it to Ready.
      const resume = /`convoy (resume \S+ -n \S+)`/.exec(run.stderr)?.[1];
      expect(resume).toBe(`resume paused -n ${env.ns.name}`);
      expect((await runConvoy((resume ?? '').split(' '), kubeconfig)).code).toBe(0);
      expect((await env.getRelease('paused')).spec.suspend).toBe(false);
      const resumed = await runConvoy(['wait', `${env.ns.name}/paused`, '--timeout', '120s'], kubeconfig);
      expect(resumed.stderr).not.toContain('suspended');
      expect([resumed.code, resumed.stdout]).toEqual([0, expect.stringMatching(/^Ready/)]);
    },
  );

  it('wait times out with exit 1 and the last verdict', { timeout: 400_000 }, async () => {
    await env.createRelease('never', { ...git('never-there'), ...fastRetry });
    await until(
      'Applied is False SourceNotReady',
      async () => appliedOf(await env.getRelease('never'))?.reason === 'SourceNotReady',
      { timeoutMs: 30_000 },
    );
    const run = await runConvoy(['wait', `${env.ns.name}/never`, '--timeout', '3s'], kubeconfig);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('timed out after 3s');
    expect(run.stderr).toContain('last verdict: Retrying (Applied)');
    expect(run.ms).toBeGreaterThanOrEqual(3000);
    expect(run.ms).toBeLessThan(300_000); // the 3 s timeout plus Node's start on a busy machine
  });

  it('a rollout that never becomes healthy is not Ready (Progressing: a wait, then Failed: a failure), without failurePolicy', async () => {
    await env.repo('stuck', {
      'deploy.yaml':
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: stuck}\nspec:\n  selector: {matchLabels: {app: stuck}}\n' +
        '  template:\n    metadata: {labels: {app: stuck}}\n    spec: {nodeSelector: {convoy.test/no-such-node: "true"}, containers: [{name: m, image: busybox}]}\n',
    });
    await env.createRelease('stuck', { ...git('stuck'), syncPolicy: { waveTimeout: '20s' } });
    const progressing = await until(
      'Applied True, InSync True, rollout Progressing',
      async () => {
        const r = await env.getRelease('stuck');
        const inSync = r.status?.conditions?.find((c) => c.type === 'InSync')?.status === 'True';
        return appliedOf(r)?.status === 'True' && inSync && r.status?.rollout?.state === 'Progressing'
          ? r
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    expect(progressing.status?.rollout?.renderRef).toBe(progressing.status?.lastSuccessful?.renderRef);
    const status = await runConvoy(['status', `${env.ns.name}/stuck`, '-o', 'json'], kubeconfig);
    const verdict = JSON.parse(status.stdout) as { ready: boolean; signal?: string; kind?: string };
    expect(verdict.ready).toBe(false);
    if ((await env.getRelease('stuck')).status?.rollout?.state === 'Progressing') {
      // Still Progressing after the CLI answered, so it saw Progressing: a wait, exit 3.
      expect(verdict).toMatchObject({ signal: 'Rollout', kind: 'wait' });
      expect(status.code).toBe(3);
    }
    // Safety net only: the 20-s waveTimeout is noticed at the next 10-s recheck (≤ 30 s); 3× that.
    const failed = await until(
      'the rollout Failed',
      async () => ((await env.getRelease('stuck')).status?.rollout?.state === 'Failed' ? true : undefined),
      {
        timeoutMs: 90_000,
        intervalMs: 250,
      },
    );
    expect(failed).toBe(true);
    const after = await runConvoy(['status', `${env.ns.name}/stuck`], kubeconfig);
    expect(after.code).toBe(1);
    expect(after.stdout).toMatch(/^Failed \((Applied|Rollout)\)/);
    // At once: the first verdict read ends the wait (one line, far below the timeout; the time is mostly Node's start on a busy machine).
    const waited = await runConvoy(['wait', `${env.ns.name}/stuck`, '--timeout', '120s'], kubeconfig);
    expect(waited.code).toBe(1);
    expect(waited.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^convoy: Failed \((Applied|Rollout)\)/),
    ]);
    expect(waited.ms).toBeLessThan(300_000);
  }, 400_000);

  it(
    'bad input: a missing Release, an unknown flag, no kubeconfig, a user without rights → one line each',
    { timeout: 120_000 },
    async () => {
      const missing = await runConvoy(['status', `${env.ns.name}/nope`], kubeconfig);
      expect([missing.code, missing.stderr]).toEqual([1, `convoy: Release ${env.ns.name}/nope not found\n`]);
      const flag = await runConvoy(['wait', `${env.ns.name}/nope`, '--frobnicate'], kubeconfig);
      expect(flag.code).toBe(2);
      expect(flag.stderr).toBe("convoy: wait: unknown option '--frobnicate' (see convoy wait --help)\n");
      const noCluster = await runConvoy(['status', `${env.ns.name}/late`], null);
      expect(noCluster.code).toBe(1);
      expect(noCluster.stderr).toBe(
        'convoy: no cluster: no kubeconfig: set KUBECONFIG or --kubeconfig, or create ~/.kube/config\n',
      );
      const bob = await runConvoy(['status', `${env.ns.name}/late`, '--context', 'bob'], kubeconfig);
      expect(bob.code).toBe(1);
      expect(bob.stderr).toMatch(
        /^convoy: forbidden \(HTTP 403\): releases\.convoy\.dev "late" is forbidden: User "bob" cannot get resource "releases"/,
      );
      expect(bob.stderr.trim().split('\n')).toHaveLength(1);
    },
  );
});
