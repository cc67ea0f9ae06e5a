/**
 * Writes small tar.gz archives for tests, entry by entry, with any type, name and link target —
 * including what `helm package` never writes (links, absolute and `..` names).
 */
import { gzipSync } from 'node:zlib';

export interface TarFixtureEntry {
  name: string;
  /** Default 'file'. */
  type?: 'file' | 'directory' | 'symlink' | 'hardlink' | 'fifo';
  content?: string | Uint8Array;
  linkName?: string;
  /** Write the name in a pax header (any length) instead of the 100-byte field. */
  pax?: boolean;
}

const FLAGS = { file: '0', directory: '5', symlink: '2', hardlink: '1', fifo: '6' } as const;

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, '0')}\0`;
}

function header(name: string, size: number, flag: string, linkName = ''): Buffer {
  const block = Buffer.alloc(512);
  block.write(name.slice(0, 100), 0, 'utf8');
  block.write(octal(0o644, 8), 100);
  block.write(octal(0, 8), 108);
  block.write(octal(0, 8), 116);
  block.write(octal(size, 12), 124);
  block.write(octal(0, 12), 136);
  block.write('        ', 148);
  block.write(flag, 156);
  block.write(linkName.slice(0, 100), 157, 'utf8');
  block.write('ustar\0', 257);
  block.write('00', 263);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return block;
}

function padded(data: Buffer): Buffer {
  const rest = data.length % 512;
  return rest === 0 ? data : Buffer.concat([data, Buffer.alloc(512 - rest)]);
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

/** The uncompressed tar of `entries`. */
export function tarBytes(entries: readonly TarFixtureEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const type = entry.type ?? 'file';
    const data = type === 'file' ? Buffer.from(entry.content ?? '') : Buffer.alloc(0);
    if (entry.pax) {
      const records = Buffer.from(paxRecord('path', entry.name), 'utf8');
      parts.push(header('PaxHeader', records.length, 'x'), padded(records));
    }
    parts.push(
      header(entry.pax ? 'pax-named' : entry.name, data.length, FLAGS[type], entry.linkName),
      padded(data),
    );
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** The gzipped tar of `entries`, as a `.tgz` holds it. */
export function tgzBytes(entries: readonly TarFixtureEntry[]): Buffer {
  return gzipSync(tarBytes(entries));
}
