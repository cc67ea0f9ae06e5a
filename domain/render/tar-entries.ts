/**
 * Lists the entries of an (uncompressed) tar archive: names, types and, for regular files, their
 * bytes. Enough of ustar, GNU (`L`/`K` long names) and pax (`path`, `linkpath`) for the render
 * sandbox to check vendored chart archives (domain/render/path-safety.ts `archiveEntryProblem`).
 * Pure: the caller gunzips.
 */
import type { ArchiveEntryType } from './path-safety.ts';

export interface TarEntry {
  name: string;
  type: ArchiveEntryType;
  /** Bytes of a regular file (a view into the archive); empty for the other types. */
  data: Uint8Array;
  /** The target of a symbolic or hard link, as written in the archive; undefined for the other types. */
  linkName?: string;
}

export class TarFormatError extends Error {
  override name = 'TarFormatError';
}

const BLOCK = 512;
const decoder = new TextDecoder('utf-8');

function text(block: Uint8Array, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return decoder.decode(end < 0 ? field : field.subarray(0, end));
}

/** A numeric header field: octal text, or base-256 when the high bit of its first byte is set. */
function number(block: Uint8Array, start: number, length: number): number {
  const field = block.subarray(start, start + length);
  if (field[0] !== undefined && (field[0] & 0x80) !== 0) {
    let value = field[0] & 0x7f;
    for (const byte of field.subarray(1)) value = value * 256 + byte;
    return value;
  }
  const digits = text(block, start, length).trim();
  if (digits === '') return 0;
  if (!/^[0-7]+$/.test(digits))
    throw new TarFormatError(`a header field holds "${digits}", not an octal number`);
  return parseInt(digits, 8);
}

/** The `key=value` records of a pax extended header. */
function paxRecords(data: Uint8Array): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number(decoder.decode(data.subarray(at, space)));
    if (!Number.isInteger(length) || length <= space - at)
      throw new TarFormatError('a pax record has a bad length');
    const record = decoder.decode(data.subarray(space + 1, at + length - 1));
    const eq = record.indexOf('=');
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return records;
}

function entryType(flag: string): ArchiveEntryType {
  switch (flag) {
    case '0':
    case '\0':
    case '':
    case '7':
      return 'file';
    case '5':
      return 'directory';
    case '1':
      return 'hardlink';
    case '2':
      return 'symlink';
    default:
      return 'other';
  }
}

/** The entries of `archive`, in order; at most `maxEntries` (then TarFormatError). */
export function readTarEntries(archive: Uint8Array, maxEntries = 100_000): TarEntry[] {
  const entries: TarEntry[] = [];
  let at = 0;
  let longName: string | undefined;
  let longLinkName: string | undefined;
  let pax = new Map<string, string>();
  while (at + BLOCK <= archive.length) {
    const header = archive.subarray(at, at + BLOCK);
    if (header.every((byte) => byte === 0)) break; // end of archive
    const size = number(header, 124, 12);
    const flag = String.fromCharCode(header[156] ?? 0);
    const dataStart = at + BLOCK;
    const dataEnd = dataStart + size;
    if (dataEnd > archive.length) throw new TarFormatError('an entry runs past the end of the archive');
    const data = archive.subarray(dataStart, dataEnd);
    at = dataStart + Math.ceil(size / BLOCK) * BLOCK;

    if (flag === 'L') {
      longName = text(data, 0, data.length);
      continue;
    }
    if (flag === 'x') {
      pax = paxRecords(data);
      continue;
    }
    if (flag === 'K') {
      longLinkName = text(data, 0, data.length);
      continue;
    }
    if (flag === 'g') continue; // global pax header
    // POSIX ustar has a name prefix field; GNU tar ("ustar " magic) uses that space otherwise.
    const prefix = text(header, 257, 6) === 'ustar' ? text(header, 345, 155) : '';
    const shortName = text(header, 0, 100);
    const name = pax.get('path') ?? longName ?? (prefix ? `${prefix}/${shortName}` : shortName);
    const type = entryType(flag);
    const linked = type === 'symlink' || type === 'hardlink';
    const linkName = pax.get('linkpath') ?? longLinkName ?? text(header, 157, 100);
    entries.push({
      name,
      type,
      data: type === 'file' ? data : new Uint8Array(),
      ...(linked ? { linkName } : {}),
    });
    if (entries.length > maxEntries)
      throw new TarFormatError(`the archive holds more than ${maxEntries} entries`);
    longName = undefined;
    longLinkName = undefined;
    pax = new Map();
  }
  return entries;
}
