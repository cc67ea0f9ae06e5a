/**
 * A small, deterministic tar writer (POSIX ustar + pax headers for long names) for the image
 * layers: every entry owned by root (uid/gid 0), mtime fixed, entries in the caller's order.
 * Streams: file contents are read from disk as the tar is consumed.
 */
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join, posix } from 'node:path';

export type TarEntry =
  | { type: 'dir'; path: string; mode?: number }
  | { type: 'file'; path: string; mode?: number; source: string; size: number }
  | { type: 'data'; path: string; mode?: number; data: Buffer }
  | { type: 'symlink'; path: string; target: string };

export class TarError extends Error {
  override name = 'TarError';
}

const BLOCK = 512;
/** 2000-01-01T00:00:00Z: a fixed time, so the same inputs give the same layer digest. */
export const FIXED_MTIME = 946_684_800;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(
  name: string,
  opts: { size: number; mode: number; typeflag: string; linkname?: string },
): Buffer {
  const b = Buffer.alloc(BLOCK);
  b.write(name, 0, 100, 'utf8');
  b.write(octal(opts.mode, 8), 100, 8, 'ascii');
  b.write(octal(0, 8), 108, 8, 'ascii');
  b.write(octal(0, 8), 116, 8, 'ascii');
  b.write(octal(opts.size, 12), 124, 12, 'ascii');
  b.write(octal(FIXED_MTIME, 12), 136, 12, 'ascii');
  b.write('        ', 148, 8, 'ascii');
  b.write(opts.typeflag, 156, 1, 'ascii');
  if (opts.linkname !== undefined) b.write(opts.linkname, 157, 100, 'utf8');
  b.write('ustar\0', 257, 6, 'ascii');
  b.write('00', 263, 2, 'ascii');
  b.write('root', 265, 32, 'ascii');
  b.write('root', 297, 32, 'ascii');
  let sum = 0;
  for (const byte of b) sum += byte;
  b.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return b;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/** Header blocks of one entry: a pax header first when the path or link target does not fit ustar. */
function headers(
  name: string,
  opts: { size: number; mode: number; typeflag: string; linkname?: string },
): Buffer[] {
  const records: string[] = [];
  if (Buffer.byteLength(name) > 100) records.push(paxRecord('path', name));
  if (opts.linkname !== undefined && Buffer.byteLength(opts.linkname) > 100)
    records.push(paxRecord('linkpath', opts.linkname));
  const out: Buffer[] = [];
  if (records.length > 0) {
    const pax = Buffer.from(records.join(''), 'utf8');
    out.push(
      header(`PaxHeaders/${name.slice(-80)}`, { size: pax.length, mode: 0o644, typeflag: 'x' }),
      pax,
      padding(pax.length),
    );
  }
  out.push(header(name.slice(0, 100), opts));
  return out;
}

/** The tar stream of `entries`, ending with the two zero blocks. */
export async function* tarStream(entries: Iterable<TarEntry>): AsyncGenerator<Buffer> {
  for (const entry of entries) {
    const path = entry.path.replace(/^\/+/, '');
    if (path === '' || path.split('/').includes('..'))
      throw new TarError(`tar entry path "${entry.path}" is empty or leaves the root`);
    switch (entry.type) {
      case 'dir':
        yield* headers(path.endsWith('/') ? path : `${path}/`, {
          size: 0,
          mode: entry.mode ?? 0o755,
          typeflag: '5',
        });
        break;
      case 'symlink':
        yield* headers(path, { size: 0, mode: 0o777, typeflag: '2', linkname: entry.target });
        break;
      case 'data':
        yield* headers(path, { size: entry.data.length, mode: entry.mode ?? 0o644, typeflag: '0' });
        yield entry.data;
        yield padding(entry.data.length);
        break;
      case 'file': {
        yield* headers(path, { size: entry.size, mode: entry.mode ?? 0o644, typeflag: '0' });
        let read = 0;
        for await (const chunk of createReadStream(entry.source)) {
          read += (chunk as Buffer).length;
          yield chunk as Buffer;
        }
        if (read !== entry.size)
          throw new TarError(
            `${entry.source} changed size while being archived (${entry.size} → ${read} bytes)`,
          );
        yield padding(entry.size);
        break;
      }
    }
  }
  yield Buffer.alloc(BLOCK * 2);
}

/** Directory entries for every parent of `path` (e.g. usr/, usr/local/ for usr/local/bin). */
export function parentDirs(path: string): TarEntry[] {
  const parts = path.replace(/^\/+|\/+$/g, '').split('/');
  return parts.slice(0, -1).map((_, i) => ({ type: 'dir' as const, path: parts.slice(0, i + 1).join('/') }));
}

/**
 * Entries for everything under `dir`, placed at `prefix` in the archive, sorted by path.
 * Modes are normalized: 0755 for directories and executables, 0644 for other files.
 */
export async function dirEntries(dir: string, prefix: string): Promise<TarEntry[]> {
  const out: TarEntry[] = [{ type: 'dir', path: prefix }];
  const walk = async (abs: string, rel: string): Promise<void> => {
    const names = (await readdir(abs)).sort();
    for (const name of names) {
      const source = join(abs, name);
      const path = posix.join(rel, name);
      const st = await lstat(source);
      if (st.isSymbolicLink()) out.push({ type: 'symlink', path, target: await readlink(source) });
      else if (st.isDirectory()) {
        out.push({ type: 'dir', path });
        await walk(source, path);
      } else if (st.isFile())
        out.push({ type: 'file', path, source, size: st.size, mode: st.mode & 0o111 ? 0o755 : 0o644 });
      else
        throw new TarError(
          `${source} is neither a file, a directory nor a symlink; an image layer cannot hold it`,
        );
    }
  };
  await walk(dir, prefix);
  return out;
}
