// The local OCI registry of `convoy dev`, beside its Git server: distribution's `registry` (built by
// scripts/build-oci-registry.sh into ~/.cache/convoy/tools), on 127.0.0.1:<--oci-port> over plain
// HTTP, anonymous, with its storage in a temp folder. convoy dev pushes the OCI examples to it:
// examples/oci/chart (a Helm chart) with the real `helm push`, and examples/oci/manifests as an
// artifact in the format `flux push artifact` writes (dev/oci-artifact-push.ts). The Releases of
// examples/oci/ read them. Without the binary, convoy dev says so in one line and skips only them.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { folderEntries, pushArtifact, tarGz } from './oci-artifact-push.ts';
import { ownedTempPrefix } from './stale-dirs.ts';

const run = promisify(execFile);

/** The script that builds the registry, beside convoy's code (copied into the package too). */
const BUILD_SCRIPT = join(import.meta.dirname, '..', 'scripts', 'build-oci-registry.sh');

/** The registry version scripts/build-oci-registry.sh builds by default. */
const REGISTRY_VERSION = 'v3.1.2';

/** Where scripts/build-oci-registry.sh puts the binary. */
export function registryBinaryPath(env: Record<string, string | undefined> = process.env): string {
  const cache = env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache');
  return join(
    cache,
    'convoy',
    'tools',
    `registry-${env['CONVOY_REGISTRY_VERSION'] ?? REGISTRY_VERSION}`,
    'registry',
  );
}

export class RegistryBinaryMissingError extends Error {
  override name = 'RegistryBinaryMissingError';
}

export interface DevRegistry {
  /** `127.0.0.1:<port>`. */
  readonly host: string;
  /** What was pushed, for the banner: `oci://…` references. */
  readonly pushed: readonly string[];
  stop(): Promise<void>;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function waitForRegistry(base: string, exited: () => boolean, log: () => string): Promise<void> {
  // Polls /v2/ until the registry answers (any HTTP status); it answers ~35 ms after start.
  for (let attempt = 0; attempt < 400; attempt++) {
    if (exited()) throw new Error(`the OCI registry exited before answering:\n${log()}`);
    try {
      const response = await fetch(`${base}/v2/`, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      return;
    } catch {
      await new Promise((ok) => setTimeout(ok, 25));
    }
  }
  throw new Error(`the OCI registry at ${base} did not answer /v2/ within 10 s:\n${log()}`);
}

export interface RunningRegistry {
  /** The tail of the registry's own output (for errors). */
  output(): string;
  /** Stops the process (SIGTERM) and waits for it; the caller removes its folder. */
  kill(): Promise<void>;
}

/**
 * Writes `<work>/config.yml` (filesystem storage under `<work>/data`, deletes allowed, the access log
 * off, `http` as given plus `extraConfig` lines such as an `auth:` block), runs `registry serve` in
 * `work` and waits until /v2/ answers. convoy dev's registry and the tests' (test/harness/oci-registry.ts)
 * both start through here. On failure the process is stopped and the error carries its output.
 */
export async function serveRegistry(input: {
  binary: string;
  work: string;
  host: string;
  http?: string;
  extraConfig?: readonly string[];
}): Promise<RunningRegistry> {
  const { work, host } = input;
  await writeFile(
    join(work, 'config.yml'),
    [
      'version: 0.1',
      'storage:',
      `  filesystem: {rootdirectory: ${JSON.stringify(join(work, 'data'))}}`,
      '  delete: {enabled: true}',
      input.http ?? `http: {addr: "${host}"}`,
      'log: {accesslog: {disabled: true}, level: error}',
      ...(input.extraConfig ?? []),
      '',
    ].join('\n'),
  );
  let output = '';
  const child = spawn(input.binary, ['serve', join(work, 'config.yml')], {
    cwd: work,
    env: { PATH: process.env['PATH'] ?? '', OTEL_TRACES_EXPORTER: 'none' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8192);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  try {
    await waitForRegistry(
      `http://${host}`,
      () => child.exitCode !== null,
      () => output,
    );
  } catch (error) {
    await kill();
    throw error;
  }
  return { output: () => output, kill };
}

/** Starts the registry on 127.0.0.1:`port`; throws RegistryBinaryMissingError when it is not built. */
export async function startDevRegistry(
  port: number,
  binary = registryBinaryPath(),
): Promise<DevRegistry & { pushExamples(examplesDir: string, helm: string): Promise<void> }> {
  if (!existsSync(binary)) {
    throw new RegistryBinaryMissingError(
      `no OCI registry at ${binary}: build it with ${BUILD_SCRIPT} (needs Go); the OCI examples (examples/oci) are skipped`,
    );
  }
  const host = `127.0.0.1:${port}`;
  // Another server there would answer /v2/ before the registry fails to listen: check first.
  if (!(await canListen(port)))
    throw Object.assign(new Error(`listen ${host}: address already in use`), { code: 'EADDRINUSE' });
  const work = await mkdtemp(join(tmpdir(), ownedTempPrefix('convoy-oci-')));
  let registry: RunningRegistry;
  try {
    registry = await serveRegistry({ binary, work, host });
  } catch (error) {
    await rm(work, { recursive: true, force: true });
    throw /address already in use/i.test(String(error))
      ? Object.assign(new Error(`listen ${host}: address already in use`), { code: 'EADDRINUSE' })
      : error;
  }
  const stop = async () => {
    await registry.kill();
    await rm(work, { recursive: true, force: true });
  };
  const pushed: string[] = [];
  return {
    host,
    pushed,
    stop,
    async pushExamples(examplesDir, helm) {
      // The chart, with the real helm: package, then push (helm prints the digest).
      const helmHome = join(work, 'helm');
      const helmEnv = {
        PATH: process.env['PATH'] ?? '',
        HOME: helmHome,
        HELM_CACHE_HOME: join(helmHome, 'cache'),
        HELM_CONFIG_HOME: join(helmHome, 'config'),
        HELM_DATA_HOME: join(helmHome, 'data'),
      };
      const out = join(work, 'packaged');
      await mkdir(out, { recursive: true });
      const { stdout } = await run(
        helm,
        ['package', join(examplesDir, 'oci', 'chart'), '--destination', out],
        { env: helmEnv },
      );
      const archive = /saved it to:\s*(\S+\.tgz)/.exec(stdout)?.[1];
      if (archive === undefined) throw new Error(`helm package printed no archive path: ${stdout}`);
      await run(helm, ['push', archive, `oci://${host}/charts`, '--plain-http'], { env: helmEnv });
      pushed.push(`oci://${host}/charts/hello-chart`);
      // The manifests, as flux push artifact writes them.
      const layer = tarGz(await folderEntries(join(examplesDir, 'oci', 'manifests')));
      await pushArtifact(
        { registry: host, repository: 'manifests/hello-oci', tag: '1.0.0', plainHttp: true },
        layer,
      );
      pushed.push(`oci://${host}/manifests/hello-oci:1.0.0`);
    },
  };
}

/** `CONVOY_INSECURE_REGISTRIES` plus the dev registry (unless every registry already is allowed). */
export function withInsecureRegistry(current: string | undefined, host: string): string {
  const list = (current ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  if (list.includes('*') || list.includes(host)) return list.join(',');
  return [...list, host].join(',');
}

/**
 * convoy dev's registry with the OCI examples pushed, or undefined after one line saying why not
 * (no binary, the port taken, a push that failed): only the OCI examples are skipped then.
 */
export async function startExampleRegistry(input: {
  port: number;
  examplesDir: string;
  helm: () => Promise<string>;
  say: (line: string) => void;
}): Promise<DevRegistry | undefined> {
  let registry;
  try {
    registry = await startDevRegistry(input.port);
  } catch (error) {
    if (error instanceof RegistryBinaryMissingError) {
      input.say(error.message);
      return undefined;
    }
    const code = error instanceof Error && 'code' in error ? String(error.code) : '';
    if (code === 'EADDRINUSE') {
      input.say(
        `port ${input.port} (--oci-port) is already in use: no OCI registry, the OCI examples (examples/oci) are skipped`,
      );
      return undefined;
    }
    throw error;
  }
  if (
    existsSync(join(input.examplesDir, 'oci', 'chart')) &&
    existsSync(join(input.examplesDir, 'oci', 'manifests'))
  ) {
    try {
      await registry.pushExamples(input.examplesDir, await input.helm());
    } catch (error) {
      input.say(
        `pushing the OCI examples to ${registry.host} failed (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); the registry runs without them`,
      );
    }
  }
  return registry;
}
