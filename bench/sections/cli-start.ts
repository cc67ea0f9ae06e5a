// cliStart: how long `convoy` takes from exec to exit as a user runs it — the compiled package
// (tsc -p tsconfig.build.json, the JavaScript `npm run build` ships in dist/, run with `node`
// and no TypeScript loader), in a fresh process each time: `convoy --help`, `convoy version`,
// and `convoy get -A` against a cluster (the bench's kube-apiserver when one runs, otherwise a
// local HTTP server answering an empty Release list, so connect + one request are included).
// Target: p50 < 300 ms each.
import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { median, percentile, since } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';

const run = promisify(execFile);
const TARGET_MS = 300;
const RUNS = 11;

function timeOnce(
  bin: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ ms: number; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: since(started), code, stderr }));
  });
}

async function measure(
  bin: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ args: string; p50Ms: number; p90Ms: number; minMs: number; runs: number; met: boolean }> {
  await timeOnce(bin, args, env); // warms the file cache, as a user's second call is
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = await timeOnce(bin, args, env);
    if (r.code !== 0)
      throw new Error(`convoy ${args.join(' ')} exited ${r.code}: ${r.stderr.trim().split('\n')[0] ?? ''}`);
    times.push(r.ms);
  }
  const p50 = median(times) ?? 0;
  return {
    args: args.join(' '),
    p50Ms: p50,
    p90Ms: percentile(times, 90) ?? 0,
    minMs: Math.min(...times),
    runs: RUNS,
    met: p50 < TARGET_MS,
  };
}

/** An API server stand-in that answers every Release list with an empty list. */
async function stubApiServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.end(
      JSON.stringify({
        apiVersion: 'convoy.dev/v1alpha1',
        kind: 'ReleaseList',
        metadata: { resourceVersion: '1' },
        items: [],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the stub API server has no port');
  return { server, url: `http://127.0.0.1:${address.port}` };
}

export async function benchCliStart(
  root: string,
  cluster?: { kubeconfigPath: string },
): Promise<Record<string, unknown>> {
  const work = join(root, '.convoy', 'bench-cli');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  let stub: Server | undefined;
  try {
    log('cliStart: compiling the package (tsc -p tsconfig.build.json)');
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    let t = performance.now();
    await run(
      process.execPath,
      [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', join(work, 'dist')],
      { cwd: root, maxBuffer: 64 << 20 },
    );
    const compileMs = since(t);
    await cp(join(root, 'package.json'), join(work, 'package.json'));
    const bin = join(work, 'dist', 'bin', 'convoy.js');
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', HOME: '/nonexistent-home' };

    let kubeconfig = cluster?.kubeconfigPath;
    let against = 'kube-apiserver (the bench control plane)';
    if (kubeconfig === undefined) {
      const started = await stubApiServer();
      stub = started.server;
      kubeconfig = join(work, 'kubeconfig');
      await writeFile(
        kubeconfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'stub', cluster: { server: started.url } }],
          users: [{ name: 'u', user: { token: 'bench' } }],
          contexts: [{ name: 'stub', context: { cluster: 'stub', user: 'u' } }],
          'current-context': 'stub',
        }),
      );
      against = 'a local HTTP server answering an empty Release list (no control plane in this run)';
    }

    log('cliStart: timing convoy --help, version, get -A');
    t = performance.now();
    const nodeBaseline = await measure('-e', ['0'], env); // an empty Node process on this host, for scale
    const help = await measure(bin, ['--help'], env);
    const version = await measure(bin, ['version'], env);
    const getAll = await measure(bin, ['get', '-A'], { ...env, KUBECONFIG: kubeconfig });
    return {
      how: `tsc -p tsconfig.build.json to .convoy/bench-cli (the JavaScript the package ships), then per command ${RUNS} fresh \`node dist/bin/convoy.js <args>\` processes after one warm-up; wall time from spawn to exit; get -A against ${against}`,
      targets: { p50Ms: TARGET_MS },
      met: help.met && version.met && getAll.met,
      help,
      version,
      getAllNamespaces: getAll,
      nodeBaseline: {
        p50Ms: nodeBaseline.p50Ms,
        note: '`node -e 0`: what any Node CLI pays before its first line; a loaded host inflates every number alike',
      },
      compileMs,
      measureMs: since(t),
    };
  } finally {
    stub?.close();
    await rm(work, { recursive: true, force: true });
  }
}
