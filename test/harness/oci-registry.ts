/**
 * A real OCI registry for tests: distribution's `registry` v3.1.2 (scripts/build-oci-registry.sh
 * builds and caches it), on 127.0.0.1 over plain HTTP with filesystem storage in a temporary folder,
 * optionally behind htpasswd basic auth (bcrypt lines from bcryptjs). Charts are pushed with the real
 * `helm push --plain-http`. One registry per test file: start it in beforeAll, stop it in afterAll.
 *
 * The recipe is the one checked in /work/shared/design/COMPONENTS.md ("OCI registry for Helm charts").
 */
import { execFile } from 'node:child_process';
import { createPrivateKey, sign, X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import bcrypt from 'bcryptjs';
import { createToolLocator } from '../../adapters/tools/binaries.ts';
import { serveRegistry, type RunningRegistry } from '../../dev/oci-registry.ts';

const execFileAsync = promisify(execFile);
const root = resolve(import.meta.dirname, '..', '..');

export interface OciRegistryOptions {
  /** htpasswd users; none: anonymous pull and push. */
  users?: { username: string; password: string }[];
  /**
   * Token auth instead (as Docker Hub, GHCR, Harbor): the registry answers `Bearer realm=…` and
   * verifies ES256 JWTs against a self-signed certificate (openssl); a token server on 127.0.0.1
   * issues them — to these users (basic auth) for pull and push, anonymously for pull of
   * repositories under `public/`. `tokenRequests` counts what it was asked.
   */
  token?: { users: { username: string; password: string }[] };
  /**
   * Serve TLS (instead of plain HTTP) with a certificate for IP 127.0.0.1 signed by a CA made here
   * with openssl (`caPem`); charts are pushed with `helm push --ca-file`.
   */
  tls?: boolean;
}

export interface PushedChart {
  /** `sha256:<hex>` of the chart manifest, as `helm push` prints it. */
  digest: string;
}

export interface OciRegistry {
  /** `127.0.0.1:<port>`. */
  host: string;
  /**
   * Every `host:port` convoy connects to for this registry (the registry, and the token server of
   * `token`): what a test's egress allow list opens for it (loopback is refused otherwise).
   */
  readonly egressHosts: readonly string[];
  /** With `token`: each token request as `<user or anonymous> <scope>`. */
  readonly tokenRequests: readonly string[];
  /** With `tls`: the PEM of the CA that signed the registry's certificate. */
  readonly caPem?: string;
  /** `oci://127.0.0.1:<port>/<path>`. */
  url(path: string): string;
  /**
   * Packages a generated chart `name` `version` (one ConfigMap `<name>-version` with data.version and
   * data.mark) and pushes it to `oci://<host>/<path>` with helm (credentials of the first user).
   */
  pushChart(path: string, name: string, version: string, mark?: string): Promise<PushedChart>;
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
  const { stdout } = await execFileAsync('bash', [join(root, 'scripts', 'build-oci-registry.sh')], {
    maxBuffer: 1 << 20,
  });
  return stdout.trim();
}

export async function startOciRegistry(options: OciRegistryOptions = {}): Promise<OciRegistry> {
  const binary = await registryBinary();
  const helm = (await createToolLocator().locate()).helm;
  const work = await mkdtemp(join(tmpdir(), 'convoy-oci-registry-'));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const auth = options.users && options.users.length > 0;
  const tokenRequests: string[] = [];
  const token = options.token ? await startTokenServer(work, options.token.users, tokenRequests) : undefined;
  const tls = options.tls ? await makeTlsCertificate(work) : undefined;
  if (auth) {
    const lines = options.users!.map((u) => `${u.username}:${bcrypt.hashSync(u.password, 4)}`);
    await writeFile(join(work, 'htpasswd'), `${lines.join('\n')}\n`);
  }
  let registry: RunningRegistry;
  try {
    registry = await serveRegistry({
      binary,
      work,
      host,
      ...(tls
        ? {
            http: `http: {addr: "${host}", tls: {certificate: ${JSON.stringify(tls.certFile)}, key: ${JSON.stringify(tls.keyFile)}}}`,
          }
        : {}),
      extraConfig: [
        ...(auth
          ? ['auth:', `  htpasswd: {realm: convoy-test, path: ${JSON.stringify(join(work, 'htpasswd'))}}`]
          : []),
        ...(token
          ? [
              'auth:',
              `  token: {realm: "${token.realm}", service: ${TOKEN_SERVICE}, issuer: ${TOKEN_ISSUER}, rootcertbundle: ${JSON.stringify(token.certFile)}}`,
            ]
          : []),
      ],
    });
  } catch (error) {
    await token?.stop();
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
  const user = options.users?.[0] ?? options.token?.users[0];

  return {
    host,
    egressHosts: token ? [host, new URL(token.realm).host] : [host],
    tokenRequests,
    ...(tls ? { caPem: tls.caPem } : {}),
    url: (path) => `oci://${host}/${path}`,
    async pushChart(path, name, version, mark = '') {
      const dir = join(work, 'src', `${name}-${version}-${Math.random().toString(36).slice(2)}`, name);
      const files: Record<string, string> = {
        'Chart.yaml': `apiVersion: v2\nname: ${name}\nversion: ${version}\ntype: application\n`,
        'values.yaml': 'replicaCount: 1\n',
        'templates/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}-version\ndata:\n  version: "${version}"\n  mark: "${mark}"\n`,
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
        [
          'push',
          join(out, `${name}-${version}.tgz`),
          `oci://${host}/${path}`,
          ...(tls ? ['--ca-file', tls.caFile] : ['--plain-http']),
          ...credentials,
        ],
        { env: helmEnv },
      );
      const digest = /Digest:\s*(sha256:[0-9a-f]{64})/.exec(`${stdout}\n${stderr}`)?.[1];
      if (digest === undefined) throw new Error(`helm push printed no digest:\n${stdout}\n${stderr}`);
      return { digest };
    },
    async stop() {
      await registry.kill();
      await token?.stop();
      await rm(work, { recursive: true, force: true });
    },
  };
}

/** A CA and a server certificate for IP 127.0.0.1 it signed (P-256, two days), with openssl. */
export async function makeTlsCertificate(
  work: string,
): Promise<{ caPem: string; caFile: string; certFile: string; keyFile: string }> {
  const dir = join(work, 'tls');
  await mkdir(dir, { recursive: true });
  const { caFile, keyFile: caKey, caPem } = await makeTestCa(dir, 'convoy-test-registry-ca');
  const keyFile = join(dir, 'server.key');
  const csr = join(dir, 'server.csr');
  const certFile = join(dir, 'server.crt');
  const ext = join(dir, 'server.ext');
  await writeFile(
    ext,
    'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n',
  );
  await newP256Key('127.0.0.1', keyFile, csr);
  await execFileAsync('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    caFile,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    ext,
    '-out',
    certFile,
  ]);
  return { caPem, caFile, certFile, keyFile };
}

/**
 * `openssl req` with a new P-256 key in keyFile: a certificate request for `/CN=commonName` in out,
 * or, with `-x509` among the options, a certificate the key signed itself.
 */
async function newP256Key(
  commonName: string,
  keyFile: string,
  out: string,
  options: readonly string[] = [],
): Promise<void> {
  await execFileAsync('openssl', [
    'req',
    ...options,
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    `/CN=${commonName}`,
    '-keyout',
    keyFile,
    '-out',
    out,
  ]);
}

/** A new P-256 key in keyFile and a certificate for it, signed by itself, for two days, in certFile. */
const selfSigned = (
  commonName: string,
  keyFile: string,
  certFile: string,
  extensions: readonly string[] = [],
): Promise<void> => newP256Key(commonName, keyFile, certFile, ['-x509', '-days', '2', ...extensions]);

/** A self-signed CA (P-256, two days) in `dir`: `<name>.crt` and `<name>.key`. Tests use one that signed nothing as a wrong CA. */
export async function makeTestCa(
  dir: string,
  name: string,
): Promise<{ caFile: string; keyFile: string; caPem: string }> {
  const caFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  await selfSigned(name, keyFile, caFile, [
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return { caFile, keyFile, caPem: await readFile(caFile, 'utf8') };
}

const TOKEN_SERVICE = 'convoy-test-registry';
const TOKEN_ISSUER = 'convoy-test-issuer';

/**
 * The token server of a token-auth registry: GET /token?service=…&scope=repository:<name>:<actions>
 * answers {token} — an ES256 JWT with the x5c header the registry checks against the certificate.
 */
async function startTokenServer(
  work: string,
  users: { username: string; password: string }[],
  requests: string[],
): Promise<{ realm: string; certFile: string; stop(): Promise<void> }> {
  const keyFile = join(work, 'token-key.pem');
  const certFile = join(work, 'token-cert.pem');
  await selfSigned('convoy-test-token', keyFile, certFile);
  const key = createPrivateKey(await readFile(keyFile));
  const der = new X509Certificate(await readFile(certFile)).raw.toString('base64');
  const b64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://token');
    const header = req.headers.authorization ?? '';
    const decoded = header.startsWith('Basic ')
      ? Buffer.from(header.slice(6), 'base64').toString('utf8')
      : undefined;
    const user =
      decoded === undefined ? undefined : users.find((u) => `${u.username}:${u.password}` === decoded);
    const scope = url.searchParams.get('scope') ?? '';
    requests.push(
      `${decoded === undefined ? 'anonymous' : (user?.username ?? 'wrong-credentials')} ${scope}`,
    );
    if (url.pathname !== '/token') {
      res.writeHead(404).end();
      return;
    }
    if (decoded !== undefined && user === undefined) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"details":"wrong credentials"}');
      return;
    }
    const access =
      scope === ''
        ? []
        : scope.split(' ').flatMap((s) => {
            const [type, name, actions] = s.split(':');
            if (type !== 'repository' || name === undefined || actions === undefined) return [];
            const granted =
              user !== undefined
                ? actions.split(',')
                : name.startsWith('public/')
                  ? actions.split(',').filter((a) => a === 'pull')
                  : [];
            return [{ type, name, actions: granted }];
          });
    const now = Math.floor(Date.now() / 1000);
    const head = b64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', x5c: [der] }));
    const claims = b64url(
      JSON.stringify({
        iss: TOKEN_ISSUER,
        sub: user?.username ?? '',
        aud: url.searchParams.get('service') ?? TOKEN_SERVICE,
        exp: now + 600,
        nbf: now - 10,
        iat: now,
        jti: Math.random().toString(36).slice(2),
        access,
      }),
    );
    const signature = sign('sha256', Buffer.from(`${head}.${claims}`), { key, dsaEncoding: 'ieee-p1363' });
    const token = `${head}.${claims}.${b64url(signature)}`;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ token, access_token: token, expires_in: 600 }));
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    realm: `http://127.0.0.1:${port}/token`,
    certFile,
    stop: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
