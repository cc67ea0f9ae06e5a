/**
 * A real OCI registry for tests: distribution's `registry` v3.1.2 (scripts/build-oci-registry.sh
 * builds and caches it), on 127.0.0.1 over plain HTTP with filesystem storage in a temporary folder,
 * optionally behind htpasswd basic auth (bcrypt lines from bcryptjs). Charts are pushed with the real
 * `helm push --plain-http`. One registry per test file: start it in beforeAll, stop it in afterAll.
 *
 * The recipe is the one checked in /work/shared/design/COMPONENTS.md ("OCI registry for Helm charts").
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import bcrypt from 'bcryptjs';
import { createToolLocator } from '../../adapters/tools/binaries.ts';

const execFileAsync = promisify(execFile);
const root = resolve(import.meta.dirname, '..', '..');

export interface OciRegistryOptions {
  /** htpasswd users; none: anonymous pull and push. */
  users?: { username: string; password: string }[];
}

export interface PushedChart {
  /** `sha256:<hex>` of the chart manifest, as `helm push` prints it. */
  digest: string;
}

export interface OciRegistry {
  /** `127.0.0.1:<port>`. */
  host: string;
  /** `oci://127.0.0.1:<port>/<path>`. */
  url(path: string): string;
  /**
   * Packages a generated chart `name` `version` (one ConfigMap `<name>-version` with data.version and
   * data.mark) and pushes it to `oci://<host>/<path>` with helm (credentials of the first user).
   */
  pushChart(path: string, name: string, version: string, mark?: string): Promise<PushedChart>;
  /** Deletes a manifest (by digest) — with the tag pushed again, a moved tag. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

async function registryBinary(): Promise<string> {
  const { stdout } = await execFileAsync('bash', [join(root, 'scripts', 'build-oci-registry.sh')], { maxBuffer: 1 << 20 });
  return stdout.trim();
}

async function waitForRegistry(base: string, child: ChildProcess, log: () => string): Promise<void> {
  // Polls /v2/ until the registry answers (any HTTP status); the registry answers ~35 ms after start.
  for (let attempt = 0; attempt < 400; attempt++) {
    if (child.exitCode !== null) throw new Error(`the OCI registry exited (${child.exitCode}) before answering:\n${log()}`);
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

export async function startOciRegistry(options: OciRegistryOptions = {}): Promise<OciRegistry> {
  const binary = await registryBinary();
  const helm = (await createToolLocator().locate()).helm;
  const work = await mkdtemp(join(tmpdir(), 'convoy-oci-registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const auth = options.users && options.users.length > 0;
  if (auth) {
    const lines = options.users!.map((u) => `${u.username}:${bcrypt.hashSync(u.password, 4)}`);
    await writeFile(join(work, 'htpasswd'), `${lines.join('\n')}\n`);
  }
  await writeFile(
    join(work, 'config.yml'),
    [
      'version: 0.1',
      'storage:',
      `  filesystem: {rootdirectory: ${JSON.stringify(join(work, 'data'))}}`,
      '  delete: {enabled: true}',
      `http: {addr: "${host}"}`,
      'log: {accesslog: {disabled: true}, level: error}',
      ...(auth ? ['auth:', `  htpasswd: {realm: convoy-test, path: ${JSON.stringify(join(work, 'htpasswd'))}}`] : []),
      '',
    ].join('\n'),
  );
  let output = '';
  const child = spawn(binary, ['serve', join(work, 'config.yml')], {
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
  try {
    await waitForRegistry(`http://${host}`, child, () => output);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    await rm(work, { recursive: true, force: true });
    throw error;
  }

  const helmHome = join(work, 'helm');
  const helmEnv = {
    PATH: process.env['PATH'] ?? '',
    HOME: helmHome,
    HELM_CACHE_HOME: join(helmHome, 'cache'),
    HELM_CONFIG_HOME: join(helmHome, 'config'),
    HELM_DATA_HOME: join(helmHome, 'data'),
  };
  const user = options.users?.[0];

  return {
    host,
    url: (path) => `oci://${host}/${path}`,
    async pushChart(path, name, version, mark = '') {
      const dir = join(work, 'src', `${name}-${version}-${Math.random().toString(36).slice(2)}`, name);
      const files: Record<string, string> = {
        'Chart.yaml': `apiVersion: v2\nname: ${name}\nversion: ${version}\ntype: application\n`,
        'values.yaml': 'replicaCount: 1\n',
        'templates/cm.yaml':
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}-version\ndata:\n  version: "${version}"\n  mark: "${mark}"\n`,
      };
      for (const [file, content] of Object.entries(files)) {
        await mkdir(dirname(join(dir, file)), { recursive: true });
        await writeFile(join(dir, file), content);
      }
      const out = join(dir, '..', 'out');
      await mkdir(out, { recursive: true });
      await execFileAsync(helm, ['package', dir, '--destination', out], { env: helmEnv });
      const credentials = user ? ['--username', user.username, '--password', user.password] : [];
      const { stdout, stderr } = await execFileAsync(
        helm,
        ['push', join(out, `${name}-${version}.tgz`), `oci://${host}/${path}`, '--plain-http', ...credentials],
        { env: helmEnv },
      );
      const digest = /Digest:\s*(sha256:[0-9a-f]{64})/.exec(`${stdout}\n${stderr}`)?.[1];
      if (digest === undefined) throw new Error(`helm push printed no digest:\n${stdout}\n${stderr}`);
      return { digest };
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      await rm(work, { recursive: true, force: true });
    },
  };
}
