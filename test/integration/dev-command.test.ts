// `convoy dev` started and stopped the way a user does it, with real processes and real signals:
// a busy port, Ctrl-C (SIGINT), SIGTERM to the process group, SIGTERM to the `npm start` process.
// Each stop must leave no process, listening port or temp folder behind (its time is printed; STOP_LIMIT_MS is a safety net).
// Every run starts its own embedded cluster (convoy dev --embedded), so this file is slow-ish.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  KubernetesObjectApi,
  PatchStrategy,
  loadAllYaml,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../dev/control-plane/processes.ts';
import { convoyApi } from '../harness/releases.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { registryBinaryPath } from '../../dev/oci-registry.ts';
import { DEV_TEMP_PREFIXES } from '../../dev/stale-dirs.ts';

const repoRoot = join(import.meta.dirname, '..', '..');
/**
 * A safety net, not the target: `convoy dev` stops in ~1.5 s on a quiet machine (printed below;
 * the product's grace periods are 1.5–2 s per process), but two CI runs at once on 2 cores took
 * more than 5 s (fresh-clone CI /tmp/ci35 at b069d12). The tests assert the order and that
 * nothing is left; a speed belongs in the bench.
 */
const STOP_LIMIT_MS = 30_000;
/**
 * The budget of a case that starts convoy dev. Its waits end on their event — the banner, the
 * leader Lease, Applied — or at once when convoy dev exits (its output then says why), not at a
 * guess at how fast this machine is: at load ~35 a healthy start alone took longer than the 60 s
 * the cases had. convoy dev bounds its own start (dev/control-plane: /readyz, the Nodes and the
 * CRDs within 120 s each), so a stuck start exits well inside this budget.
 */
const CASE_MS = 480_000;

interface Run {
  readonly proc: ChildProcess;
  /** The `node bin/convoy.ts dev` process (under npm: npm's child). */
  convoyPid: number;
  stdout: string;
  stderr: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** When its case's waits give up: the case's budget less the stop's safety net. */
  readonly deadline: number;
}

function start(argv: string[], opts: { npm?: boolean; tmpDir?: string } = {}): Run {
  const [cmd, args] = opts.npm
    ? ['npm', ['start', '--silent', '--', ...argv]]
    : [process.execPath, [join(repoRoot, 'bin/convoy.ts'), 'dev', ...argv]];
  // detached: its own process group, as a shell gives a foreground job.
  const env = {
    ...process.env,
    NO_COLOR: '1',
    ...(opts.tmpDir !== undefined ? { TMPDIR: opts.tmpDir } : {}),
  };
  const proc = spawn(cmd, args, { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  const run: Run = {
    proc,
    convoyPid: proc.pid ?? -1,
    stdout: '',
    stderr: '',
    exited: new Promise((ok) => proc.once('exit', (code, signal) => ok({ code, signal }))),
    deadline: Date.now() + CASE_MS - 2 * STOP_LIMIT_MS,
  };
  proc.stdout?.on('data', (c: Buffer) => (run.stdout += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (run.stderr += c.toString()));
  return run;
}

/**
 * Polls `check` until it gives a value: fails at once when convoy dev exits first, and names what
 * it waited for when the case's budget runs out.
 */
async function whileRunning<T>(
  run: Run,
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
): Promise<T> {
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (run.proc.exitCode !== null || run.proc.signalCode !== null)
      throw new Error(`convoy dev exited before ${what}:\n${run.stderr}\n${run.stdout.slice(-2000)}`);
    if (Date.now() > run.deadline)
      throw new Error(`convoy dev still waiting for ${what} at the end of the case's budget:\n${run.stderr}`);
    await sleep(200);
  }
}

async function runningBanner(run: Run): Promise<void> {
  await whileRunning(run, "its banner 'convoy dev is running'", () =>
    run.stdout.includes('convoy dev is running') ? true : undefined,
  );
}

/** Pids whose command line names a temp folder of `ownerPid` (the control plane's processes and its reaper). */
function processesOf(ownerPid: number): number[] {
  const marker = `convoy-cp-${ownerPid}-`;
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (cmdline.includes(marker) && !/\) Z /.test(state)) pids.push(Number(entry));
    } catch {
      // gone between readdir and read: not running
    }
  }
  return pids;
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function tempDirsOf(ownerPid: number, dir = tmpdir()): string[] {
  return readdirSync(dir).filter(
    (n) => DEV_TEMP_PREFIXES.some((prefix) => n.startsWith(prefix)) && n.includes(`-${ownerPid}-`),
  );
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** What a stopped run left behind, polled briefly (the reaper needs up to a second). */
async function leftovers(
  ownerPid: number,
  ports: number[],
  tmpDir = tmpdir(),
): Promise<{ processes: number[]; dirs: string[]; busyPorts: number[] }> {
  const deadline = Date.now() + 3_000;
  for (;;) {
    const processes = processesOf(ownerPid).filter((p) => p !== ownerPid);
    const dirs = tempDirsOf(ownerPid, tmpDir);
    const busyPorts: number[] = [];
    for (const p of ports) if (!(await canListen(p))) busyPorts.push(p);
    const found = { processes, dirs, busyPorts };
    if ((processes.length === 0 && dirs.length === 0 && busyPorts.length === 0) || Date.now() > deadline)
      return found;
    await sleep(100);
  }
}

describe('convoy dev start and stop', { timeout: CASE_MS }, () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });
  const track = (run: Run): Run => {
    cleanups.push(() => {
      for (const pid of [run.proc.pid ?? -1, run.convoyPid])
        if (pid > 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
    });
    return run;
  };

  it('a busy --api-port: one line naming the port and the flag, exit 2, nothing started', async () => {
    const [apiPort, gitPort] = await freePorts(2);
    const holder: Server = createServer();
    await new Promise<void>((ok) => holder.listen(apiPort, '127.0.0.1', ok));
    cleanups.push(() => new Promise<void>((ok) => holder.close(() => ok())));
    const run = track(start(['--embedded', '--api-port', String(apiPort), '--git-port', String(gitPort)]));
    const { code } = await run.exited;
    expect(code).toBe(2);
    // Stale temp folders of convoy devs killed earlier on this machine are removed (and said) first.
    const lines = run.stderr
      .trim()
      .split('\n')
      .filter((l) => !/^convoy dev: removed \S+ \(left behind by a convoy dev that was killed\)$/.test(l));
    expect(lines).toEqual([
      `convoy dev: port ${apiPort} (--api-port) is already in use; stop what holds it, or pick another port with --api-port <port>`,
    ]);
    expect(run.stdout).toBe('');
    expect(await leftovers(run.convoyPid, [gitPort])).toEqual({ processes: [], dirs: [], busyPorts: [] });
  });

  it('Ctrl-C (SIGINT): relay first, then the cluster; exits 0, nothing left; stale temp dirs were removed at start and an invalid example was named', async () => {
    // A temp folder of a convoy dev killed with -9 (its pid no longer runs) and one of a live process,
    // in a temp root of this run's own (its TMPDIR): any convoy dev removes the stale folders it finds,
    // and one started beside this (another test file) removed this one first in a soak.
    const tmpRoot = await mkdtemp(join(tmpdir(), 'convoy-test-tmp-'));
    cleanups.push(() => rm(tmpRoot, { recursive: true, force: true }));
    const dead = spawn('true');
    await new Promise((ok) => dead.once('exit', ok));
    const stale = await mkdtemp(join(tmpRoot, `convoy-dev-cache-${dead.pid}-`));
    const live = await mkdtemp(join(tmpRoot, `convoy-dev-cache-${process.pid}-`));
    // The examples, plus a repo file that is not YAML.
    const examples = await mkdtemp(join(tmpdir(), 'convoy-test-examples-'));
    cleanups.push(() => rm(examples, { recursive: true, force: true }));
    await cp(join(repoRoot, 'examples'), examples, { recursive: true });
    await mkdir(join(examples, 'repos', 'broken'), { recursive: true });
    await writeFile(
      join(examples, 'repos', 'broken', 'bad.yaml'),
      'kind: ConfigMap\nmetadata: {name: [unclosed\n',
    );

    const [apiPort, gitPort, ociPort] = (await freePorts(3)) as [number, number, number];
    const run = track(
      start(
        [
          '--embedded',
          '--api-port',
          String(apiPort),
          '--git-port',
          String(gitPort),
          '--oci-port',
          String(ociPort),
          '--examples',
          examples,
        ],
        { tmpDir: tmpRoot },
      ),
    );
    await runningBanner(run);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(run.stderr).toContain(`removed ${stale} (left behind by a convoy dev that was killed)`);
    expect(run.stderr).toMatch(
      /convoy dev: example \S*repos\/broken\/bad\.yaml is not valid YAML \(.+\); it is served as is/,
    );
    expect(run.stderr).toMatch(/convoy dev: starting the embedded cluster \(--embedded\)/);
    expect(processesOf(run.convoyPid).length).toBeGreaterThanOrEqual(6); // etcd, apiserver, kcm, scheduler, kwok, reaper
    await whileRunning(run, "its relay's 'started leading'", () =>
      run.stdout.includes('started leading') ? true : undefined,
    );

    const t = Date.now();
    process.kill(run.convoyPid, 'SIGINT');
    const { code } = await run.exited;
    const stopMs = Date.now() - t;
    expect(code).toBe(0);
    expect(stopMs).toBeLessThan(STOP_LIMIT_MS);
    const order = [...run.stderr.matchAll(/convoy dev: stopped (.+) \(\d+ ms\)/g)].map((m) => m[1]);
    // The OCI registry runs beside the Git server when scripts/build-oci-registry.sh built it (else one line says it is skipped).
    const registry = existsSync(registryBinaryPath()) ? ['the OCI registry'] : [];
    expect(order).toEqual([
      'the relay and the function pollers',
      'the notification receiver',
      ...registry,
      'the Git server',
      'the example repositories',
      'the embedded cluster',
    ]);
    expect(run.stdout).toContain('stopped leading'); // the relay gave up its leader Lease
    expect(run.stdout).not.toContain('giving up the leader Lease failed');
    expect(await leftovers(run.convoyPid, [apiPort, gitPort, ociPort], tmpRoot)).toEqual({
      processes: [],
      dirs: [],
      busyPorts: [],
    });
    process.stderr.write(
      `convoy dev: SIGINT → exit in ${stopMs} ms (${order.length} steps: ${[...run.stderr.matchAll(/stopped .+ \((\d+ ms)\)/g)].map((m) => m[1]).join(', ')})\n`,
    );
  });

  it('SIGTERM to the process group, with --git-port 18481-style ports: the examples reach Applied first; exits, nothing left', async () => {
    const [apiPort, gitPort] = (await freePorts(2)) as [number, number];
    const run = track(start(['--embedded', '--api-port', String(apiPort), '--git-port', String(gitPort)]));
    await runningBanner(run);
    // kubectl apply -f examples/ with the kubeconfig convoy dev printed: this run's own file (its
    // API port), so another convoy dev in this checkout (a test file beside this one) cannot replace it.
    const kubeconfig = /kubeconfig\s+(\S+)/.exec(run.stdout)?.[1] ?? '';
    expect(kubeconfig).toBe(join(repoRoot, '.convoy', `kubeconfig-${apiPort}`));
    const kc = kubeConfigFor(kubeconfig);
    const objects = KubernetesObjectApi.makeApiClient(kc);
    for (const file of ['00-namespace.yaml', '10-hello-release.yaml']) {
      for (const doc of loadAllYaml(
        readFileSync(join(repoRoot, 'examples', file), 'utf8'),
      ) as KubernetesObject[]) {
        await objects.patch(doc, undefined, undefined, 'kubectl', true, PatchStrategy.ServerSideApply);
      }
    }
    const api = convoyApi(kc);
    await whileRunning(run, 'the hello example Applied', async () => {
      const applied = (await api.getRelease('convoy-examples', 'hello')).status?.conditions?.find(
        (c) => c.type === 'Applied',
      );
      return applied?.status === 'True' ? applied : undefined;
    });
    const resolved = (await api.getRelease('convoy-examples', 'hello')).status?.lastAttempted?.resolvedSource
      ?.git?.url;
    expect(resolved).toBe(`http://127.0.0.1:${gitPort}/hello.git`);

    const t = Date.now();
    process.kill(-run.convoyPid, 'SIGTERM');
    const { code } = await run.exited;
    const stopMs = Date.now() - t;
    expect(code).toBe(0);
    expect(stopMs).toBeLessThan(STOP_LIMIT_MS);
    expect(run.stdout).not.toContain('giving up the leader Lease failed');
    expect(await leftovers(run.convoyPid, [apiPort, gitPort])).toEqual({
      processes: [],
      dirs: [],
      busyPorts: [],
    });
    expect(existsSync(kubeconfig)).toBe(false); // another port's kubeconfig goes with its cluster
    process.stderr.write(`convoy dev: SIGTERM to the group → exit in ${stopMs} ms\n`);
  });

  it("the OCI registry beside the Git server: the example chart pushed with helm push and the manifests artifact in flux push artifact's format; both example Releases of examples/oci reach Applied", async () => {
    // The registry binary, as the OCI tests build it (instant when cached).
    await new Promise<void>((ok, fail) => {
      const build = spawn('bash', [join(repoRoot, 'scripts', 'build-oci-registry.sh')], { stdio: 'ignore' });
      build.once('exit', (code) =>
        code === 0 ? ok() : fail(new Error(`build-oci-registry.sh exited ${code}`)),
      );
    });
    const [apiPort, gitPort, ociPort] = (await freePorts(3)) as [number, number, number];
    const run = track(
      start([
        '--embedded',
        '--api-port',
        String(apiPort),
        '--git-port',
        String(gitPort),
        '--oci-port',
        String(ociPort),
      ]),
    );
    await runningBanner(run);
    expect(run.stdout).toContain(
      `OCI registry 127.0.0.1:${ociPort}   (oci://127.0.0.1:${ociPort}/charts/hello-chart, oci://127.0.0.1:${ociPort}/manifests/hello-oci:1.0.0; plain HTTP allowed)`,
    );
    // The egress policy refuses loopback: convoy dev allows its own servers (Git, registry, notification receiver), and says so.
    const receiver = /notifications (http:\/\/(127\.0\.0\.1:\d+))/.exec(run.stdout);
    expect(receiver).not.toBeNull();
    expect(run.stdout).toContain(
      `egress       Releases may reach public addresses and 127.0.0.1:${gitPort}, 127.0.0.1:${ociPort}, ${receiver?.[2]} (convoy dev's own servers); other loopback and private addresses are refused`,
    );
    // What a webhook destination would receive is listed at /deliveries.
    await fetch(`${receiver?.[1]}/webhook/demo`, { method: 'POST', body: '{"transition":"Ready"}' });
    const deliveries = (await (await fetch(`${receiver?.[1]}/deliveries`)).json()) as {
      kind: string;
      body: unknown;
    }[];
    expect(deliveries).toMatchObject([{ kind: 'webhook', body: { transition: 'Ready' } }]);
    const kubeconfig = /kubeconfig\s+(\S+)/.exec(run.stdout)?.[1] ?? '';
    const kc = kubeConfigFor(kubeconfig);
    const objects = KubernetesObjectApi.makeApiClient(kc);
    // kubectl apply -f examples/00-namespace.yaml -f examples/oci, with this run's --oci-port instead of 8482.
    const files = [
      join(repoRoot, 'examples', '00-namespace.yaml'),
      ...readdirSync(join(repoRoot, 'examples', 'oci'))
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => join(repoRoot, 'examples', 'oci', f)),
    ];
    for (const file of files) {
      for (const doc of loadAllYaml(
        readFileSync(file, 'utf8').replaceAll('127.0.0.1:8482', `127.0.0.1:${ociPort}`),
      ) as KubernetesObject[]) {
        await objects.patch(doc, undefined, undefined, 'kubectl', true, PatchStrategy.ServerSideApply);
      }
    }
    const api = convoyApi(kc);
    const appliedOf = async (name: string) =>
      (await api.getRelease('convoy-examples', name)).status?.conditions?.find((c) => c.type === 'Applied');
    await whileRunning(run, 'both OCI examples Applied', async () => {
      const states = await Promise.all(['hello-oci-chart', 'hello-oci-manifests'].map(appliedOf));
      return states.every((c) => c?.status === 'True') ? true : undefined;
    });
    expect(await appliedOf('hello-oci-chart')).toMatchObject({ status: 'True', reason: 'Applied' });
    expect(await appliedOf('hello-oci-manifests')).toMatchObject({ status: 'True', reason: 'Applied' });
    const chart = await api.getRelease('convoy-examples', 'hello-oci-chart');
    expect(chart.status?.lastAttempted?.resolvedSource?.helm).toMatchObject({
      chart: 'hello-chart',
      version: '0.1.0',
    });
    expect(chart.status?.lastAttempted?.resolvedSource?.helm?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    const manifests = await api.getRelease('convoy-examples', 'hello-oci-manifests');
    expect(manifests.status?.lastAttempted?.resolvedSource?.oci).toMatchObject({
      url: `oci://127.0.0.1:${ociPort}/manifests/hello-oci`,
      tag: '1.0.0',
    });

    process.kill(-run.convoyPid, 'SIGTERM');
    const { code } = await run.exited;
    expect(code).toBe(0);
    expect(run.stderr).toMatch(/convoy dev: stopped the OCI registry \(\d+ ms\)/);
    expect(await leftovers(run.convoyPid, [apiPort, gitPort, ociPort])).toEqual({
      processes: [],
      dirs: [],
      busyPorts: [],
    });
  });

  it('SIGTERM to the `npm start` process: npm forwards it, convoy dev stops, nothing orphaned', async () => {
    const [apiPort, gitPort] = (await freePorts(2)) as [number, number];
    const run = track(
      start(['--embedded', '--api-port', String(apiPort), '--git-port', String(gitPort)], { npm: true }),
    );
    await runningBanner(run);
    // npm runs the start script with `exec`, so convoy dev is npm's own child.
    const convoy = childrenOf(run.proc.pid ?? -1).find((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('bin/convoy.ts'),
    );
    expect(convoy).toBeDefined();
    run.convoyPid = convoy!;

    const t = Date.now();
    process.kill(run.proc.pid ?? -1, 'SIGTERM');
    await run.exited;
    while (isAlive(run.convoyPid) && Date.now() - t < STOP_LIMIT_MS) await sleep(50);
    const stopMs = Date.now() - t;
    expect(isAlive(run.convoyPid)).toBe(false);
    expect(stopMs).toBeLessThan(STOP_LIMIT_MS);
    expect(await leftovers(run.convoyPid, [apiPort, gitPort])).toEqual({
      processes: [],
      dirs: [],
      busyPorts: [],
    });
    process.stderr.write(`convoy dev: SIGTERM to npm → everything gone in ${stopMs} ms\n`);
  });
});
