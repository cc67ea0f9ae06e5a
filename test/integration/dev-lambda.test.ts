// `convoy dev --runtime lambda`: the real convoy dev process with the three
// functions running as the construct's bundles under the Lambda runtime emulator (dev/lambda), fed
// by event source mappings with the template's settings, as the shipped convoy:functions identity.
// The examples become Ready, with no loop request refused.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { combinedVerdict } from '../../domain/status/verdict.ts';
import { freePorts } from '../../dev/control-plane/processes.ts';
import { applyExamples } from '../harness/apply-examples.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { convoyApi } from '../harness/releases.ts';
import { until } from '../harness/runtime-env.ts';

const repoRoot = join(import.meta.dirname, '..', '..');
const examples = join(repoRoot, 'examples');
const EXAMPLES_NS = 'convoy-examples';

interface Run {
  readonly proc: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number | null>;
}

function startDev(argv: string[]): Run {
  const proc = spawn(process.execPath, [join(repoRoot, 'bin/convoy.ts'), 'dev', ...argv], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
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

describe('convoy dev --runtime lambda', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('runs the examples to Ready with the functions as bundles under the emulator', async () => {
    const [apiPort, gitPort] = (await freePorts(2)) as [number, number];
    const started = performance.now();
    const run = startDev([
      '--embedded',
      '--runtime',
      'lambda',
      '--lambda-slots',
      '2',
      '--api-port',
      String(apiPort),
      '--git-port',
      String(gitPort),
      '--examples',
      examples,
    ]);
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
      { timeoutMs: 240_000, intervalMs: 250 },
    );
    expect(run.stderr).toMatch(/Lambda runtime: template synthesized in \d+ ms; reconcile \d+ MB/);
    const runningMs = Math.round(performance.now() - started);

    const kc = kubeConfigFor(/kubeconfig\s+(\S+)/.exec(run.stdout)?.[1] ?? '');
    const names = await applyExamples(kc, examples);
    const api = convoyApi(kc);
    const t = performance.now();
    await until(
      'every example Release is Ready',
      async () => {
        const releases = await Promise.all(names.map((n) => api.getRelease(EXAMPLES_NS, n)));
        return releases.every((r) => combinedVerdict(r).ready);
      },
      { timeoutMs: 150_000, intervalMs: 250 },
    ).catch((error: unknown) => {
      console.error(run.stderr.slice(-6000));
      throw error;
    });
    console.info(
      `convoy dev --runtime lambda: running after ${runningMs} ms, examples Ready ${Math.round(performance.now() - t)} ms after apply`,
    );
    // The functions' own lines (powertools JSON) come from the emulated functions, prefixed with their loop.
    expect(run.stderr).toMatch(/^reconcile\[\d+\] \{/m);
    expect(
      run.stderr.split('\n').filter((line) => /HTTP 403\b|forbidden|cannot impersonate/i.test(line)),
    ).toEqual([]);

    run.proc.kill('SIGINT');
    expect(await run.exited).toBe(0);
  }, 420_000);
});
