/**
 * Writes an OCI artifact to a registry through the distribution HTTP API, in the format
 * `flux push artifact` writes: an OCI image manifest whose config is
 * `application/vnd.cncf.flux.config.v1+json` (`{}`) and whose one layer is the folder as a
 * tar+gzip of media type `application/vnd.cncf.flux.content.v1.tar+gzip`, with the
 * `org.opencontainers.image.source`/`revision`/`created` annotations. `convoy dev` pushes its
 * example artifact with it, and the tests push theirs (including archives no honest tool writes:
 * `../` names, links out of the folder).
 *
 * The tar writer is ustar with deterministic headers (mtime 0, uid/gid 0), so the same files give
 * the same digest. Plain HTTP or HTTPS, anonymous or basic auth (a dev or test registry).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export const FLUX_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.flux.config.v1+json';
export const FLUX_CONTENT_MEDIA_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';
const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';

/** One tar entry to write. `name` is written as given (tests write hostile names on purpose). */
export type TarInput =
  | { name: string; type?: 'file'; content: string | Uint8Array }
  | { name: string; type: 'directory' }
  | { name: string; type: 'symlink' | 'hardlink'; target: string }
  | { name: string; type: 'fifo' };

const enc = new TextEncoder();

function putText(block: Uint8Array, offset: number, length: number, text: string): void {
  const bytes = enc.encode(text);
  if (bytes.length > length)
    throw new Error(`tar header field too long: ${JSON.stringify(text.slice(0, 60))}`);
  block.set(bytes, offset);
}
function putOctal(block: Uint8Array, offset: number, length: number, value: number): void {
  putText(block, offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
}

function header(name: string, flag: string, size: number, link = ''): Uint8Array {
  const block = new Uint8Array(512);
  let prefix = '';
  let short = name;
  if (enc.encode(name).length > 100) {
    const cut = name.lastIndexOf('/', 155);
    if (cut <= 0 || enc.encode(name.slice(cut + 1)).length > 100)
      throw new Error(`tar name too long for ustar: ${name.slice(0, 60)}…`);
    prefix = name.slice(0, cut);
    short = name.slice(cut + 1);
  }
  putText(block, 0, 100, short);
  putOctal(block, 100, 8, flag === '5' ? 0o755 : 0o644);
  putOctal(block, 108, 8, 0);
  putOctal(block, 116, 8, 0);
  putOctal(block, 124, 12, size);
  putOctal(block, 136, 12, 0);
  block.fill(0x20, 148, 156); // checksum placeholder: spaces
  putText(block, 156, 1, flag);
  putText(block, 157, 100, link);
  putText(block, 257, 6, 'ustar\0');
  putText(block, 263, 2, '00');
  putText(block, 345, 155, prefix);
  let sum = 0;
  for (const byte of block) sum += byte;
  putText(block, 148, 8, `${sum.toString(8).padStart(6, '0')}\0 `);
  return block;
}

/** A gzip-compressed ustar archive of `entries`, in order. */
export function tarGz(entries: readonly TarInput[]): Buffer {
  const parts: Uint8Array[] = [];
  for (const entry of entries) {
    switch (entry.type) {
      case 'directory':
        parts.push(header(entry.name.endsWith('/') ? entry.name : `${entry.name}/`, '5', 0));
        break;
      case 'symlink':
        parts.push(header(entry.name, '2', 0, entry.target));
        break;
      case 'hardlink':
        parts.push(header(entry.name, '1', 0, entry.target));
        break;
      case 'fifo':
        parts.push(header(entry.name, '6', 0));
        break;
      default: {
        const data = typeof entry.content === 'string' ? enc.encode(entry.content) : entry.content;
        parts.push(header(entry.name, '0', data.length), data);
        const pad = (512 - (data.length % 512)) % 512;
        if (pad > 0) parts.push(new Uint8Array(pad));
      }
    }
  }
  parts.push(new Uint8Array(1024));
  return gzipSync(Buffer.concat(parts), { level: 9 });
}

/** The files, folders and links of `dir`, sorted, as tar entries relative to it (what flux push artifact packs). */
export async function folderEntries(dir: string, prefix = ''): Promise<TarInput[]> {
  const out: TarInput[] = [];
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  for (const entry of entries) {
    const name = `${prefix}${entry.name}`;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      out.push({ name, type: 'directory' }, ...(await folderEntries(path, `${name}/`)));
    } else if (entry.isSymbolicLink()) {
      out.push({ name, type: 'symlink', target: await readlink(path) });
    } else if (entry.isFile()) {
      out.push({ name, content: await readFile(path) });
    }
  }
  return out;
}

export interface PushTarget {
  /** `host:port` of the registry. */
  registry: string;
  repository: string;
  tag: string;
  plainHttp?: boolean;
  credentials?: { username: string; password: string } | undefined;
}

export interface PushArtifactOptions {
  /** Default application/vnd.cncf.flux.content.v1.tar+gzip. */
  layerMediaType?: string;
  /** Default application/vnd.cncf.flux.config.v1+json. */
  configMediaType?: string;
  layerAnnotations?: Record<string, string>;
  annotations?: Record<string, string>;
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/**
 * Uploads `layer` and a config blob, then PUTs the manifest under `tag`. Returns the manifest's
 * digest (what `flux push artifact` prints after `@`) and the layer's size.
 */
export async function pushArtifact(
  target: PushTarget,
  layer: Uint8Array,
  options: PushArtifactOptions = {},
): Promise<{ digest: string; layerSize: number }> {
  const base = `${target.plainHttp === false ? 'https' : 'http'}://${target.registry}`;
  const auth: Record<string, string> = target.credentials
    ? {
        authorization: `Basic ${Buffer.from(`${target.credentials.username}:${target.credentials.password}`).toString('base64')}`,
      }
    : {};
  const upload = async (bytes: Uint8Array): Promise<string> => {
    const digest = sha256(bytes);
    const start = await fetch(`${base}/v2/${target.repository}/blobs/uploads/`, {
      method: 'POST',
      headers: auth,
    });
    await start.body?.cancel();
    if (start.status !== 202)
      throw new Error(
        `registry ${target.registry}: starting a blob upload to ${target.repository} answered HTTP ${start.status}`,
      );
    const location = new URL(start.headers.get('location') ?? '', base);
    location.searchParams.set('digest', digest);
    const put = await fetch(location, {
      method: 'PUT',
      headers: {
        ...auth,
        'content-type': 'application/octet-stream',
        'content-length': String(bytes.length),
      },
      body: bytes,
    });
    await put.body?.cancel();
    if (put.status !== 201)
      throw new Error(
        `registry ${target.registry}: uploading blob ${digest} to ${target.repository} answered HTTP ${put.status}`,
      );
    return digest;
  };
  const config = enc.encode('{}');
  const configDigest = await upload(config);
  const layerDigest = await upload(layer);
  const manifest = enc.encode(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: {
        mediaType: options.configMediaType ?? FLUX_CONFIG_MEDIA_TYPE,
        digest: configDigest,
        size: config.length,
      },
      layers: [
        {
          mediaType: options.layerMediaType ?? FLUX_CONTENT_MEDIA_TYPE,
          digest: layerDigest,
          size: layer.length,
          ...(options.layerAnnotations ? { annotations: options.layerAnnotations } : {}),
        },
      ],
      annotations: {
        'org.opencontainers.image.created': '2026-01-01T00:00:00Z',
        'org.opencontainers.image.source': 'convoy',
        'org.opencontainers.image.revision': target.tag,
        ...options.annotations,
      },
    }),
  );
  const put = await fetch(`${base}/v2/${target.repository}/manifests/${target.tag}`, {
    method: 'PUT',
    headers: { ...auth, 'content-type': OCI_MANIFEST },
    body: manifest,
  });
  await put.body?.cancel();
  if (put.status !== 201)
    throw new Error(
      `registry ${target.registry}: putting the manifest ${target.repository}:${target.tag} answered HTTP ${put.status}`,
    );
  return { digest: sha256(manifest), layerSize: layer.length };
}
