// `convoy dev` acts as an install does and honours the tenancy settings, so what passes in
// `convoy dev` passes in an install: the real `convoy dev --embedded` process, the relay with its
// ServiceAccount's token and the functions as the convoy:functions group under the generated RBAC. The examples become Ready
// with no request of any loop refused and their Events written; with
// CONVOY_DEFAULT_SERVICE_ACCOUNT=default, a Release without a ServiceAccount may not create a
// Namespace (on b1e28ad it did, as admin, in 5 s).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';
import { createKubeClient, resourcePath } from '../../adapters/kube/http.ts';
import { combinedVerdict } from '../../domain/status/verdict.ts';
import { freePorts } from '../../dev/control-plane/processes.ts';
import { applyExamples } from '../harness/apply-examples.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { convoyApi } from '../harness/releases.ts';
import { until } from '../harness/runtime-env.ts';

const repoRoot = join(import.meta.dirname, '..', '..');
const EXAMPLES_NS = 'convoy-examples';

interface Run {
  readonly proc: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number | null>;
}

function startDev(argv: string[], env: NodeJS.ProcessEnv): Run {
  const proc = spawn(process.execPath, [join(repoRoot, 'bin/convoy.ts'), 'dev', ...argv], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  const run: Run = {
    proc,
    stdout: '',
    stderr: '',
    exited: new Promise((ok) => proc.once('exit', (code) => ok(code))),
  };
  proc.stdout?.on('data', (c: Buffer) => (run.stdout += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (run.stderr += c.toString()));
  return run;
}

/** Log lines of the relay or a function that say the apiserver refused one of their requests. */
/**
 * Lines that report a refused request: the API server's 403 (as convoy's errors write it, `HTTP 403`, or
 * a status/code field), Forbidden, or a refused impersonation — never a number that happens to read 403
 * (CI once matched `"durationMs":403` of an ordinary requeue line).
 */
function refusedRequests(output: string): string[] {
  return output
    .split('\n')
    .filter((line) =>
      /HTTP 403\b|"(?:status|code|statusCode)":\s*403\b|forbidden|cannot impersonate/i.test(line),
    );
}

describe('convoy dev with the shipped identities', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it(
    'the examples become Ready with no loop request refused and their Events written; a Release without a ServiceAccount (CONVOY_DEFAULT_SERVICE_ACCOUNT=default) may not create a Namespace',
    { timeout: 300_000 },
    async () => {
      const evilNamespace = `evil-ns-${randomBytes(3).toString('hex')}`;
      const examples = await mkdtemp(join(tmpdir(), 'convoy-test-examples-'));
      cleanups.push(() => rm(examples, { recursive: true, force: true }));
      await cp(join(repoRoot, 'examples'), examples, { recursive: true });
      await mkdir(join(examples, 'repos', 'evil', 'app'), { recursive: true });
      await writeFile(
        join(examples, 'repos', 'evil', 'app', 'namespace.yaml'),
        `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${evilNamespace}\n`,
      );

      const [apiPort, gitPort] = (await freePorts(2)) as [number, number];
      const run = startDev(
        ['--embedded', '--api-port', String(apiPort), '--git-port', String(gitPort), '--examples', examples],
        { CONVOY_DEFAULT_SERVICE_ACCOUNT: 'default' },
      );
      cleanups.push(async () => {
        if (run.proc.exitCode === null && run.proc.signalCode === null) {
          run.proc.kill('SIGINT');
          await run.exited;
        }
      });
      await until(
        'convoy dev is running',
        () => {
          if (run.proc.exitCode !== null)
            throw new Error(`convoy dev exited (${run.proc.exitCode}):\n${run.stderr}`);
          return run.stdout.includes('convoy dev is running');
        },
        { timeoutMs: 120_000 },
      );
      expect(run.stderr).toContain(
        'the relay acts as ServiceAccount convoy-system/convoy-relay, the functions as the group convoy:functions; tenant namespaces: convoy-examples',
      );

      const kc = kubeConfigFor(/kubeconfig\s+(\S+)/.exec(run.stdout)?.[1] ?? '');
      const names = await applyExamples(kc, examples);
      const api = convoyApi(kc);
      await until(
        'every example Release is Ready',
        async () => {
          const releases = await Promise.all(names.map((n) => api.getRelease(EXAMPLES_NS, n)));
          return releases.every((r) => combinedVerdict(r).ready);
        },
        { timeoutMs: 90_000, intervalMs: 250 },
      );
      // Events of every example Release, written by the functions as convoy:functions.
      const events = (
        await createKubeClient(fromClientNodeKubeConfig(kc)).get<{
          items: { reportingController?: string; regarding?: { name?: string } }[];
        }>(resourcePath('events.k8s.io/v1', 'events', EXAMPLES_NS))
      ).items;
      for (const name of names) {
        expect(
          events.some((e) => e.regarding?.name === name && e.reportingController === 'convoy.dev/reconcile'),
          `an Event about ${name}`,
        ).toBe(true);
      }
      expect(refusedRequests(run.stdout + run.stderr)).toEqual([]);

      // The tenant's attack: a Release without serviceAccountName whose render is a Namespace.
      await api.create('Release', EXAMPLES_NS, 'evil', {
        cluster: { name: 'local' },
        targetNamespace: EXAMPLES_NS,
        source: { gitRepositoryRef: { name: 'evil', path: 'app' } },
      });
      const refused = await until(
        'the evil Release is refused',
        async () => {
          const applied = (await api.getRelease(EXAMPLES_NS, 'evil')).status?.conditions?.find(
            (c) => c.type === 'Applied',
          );
          return applied?.status === 'False' ? applied : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );
      expect(refused.message).toContain(`system:serviceaccount:${EXAMPLES_NS}:default`);
      await expect(kc.makeApiClient(CoreV1Api).readNamespace({ name: evilNamespace })).rejects.toSatisfy(
        (e: unknown) => e instanceof ApiException && e.code === 404,
      );

      run.proc.kill('SIGINT');
      expect(await run.exited).toBe(0);
      await sleep(0);
    },
  );
});
