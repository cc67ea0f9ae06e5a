/**
 * The render sandbox's filesystem walk: before any tool runs, every entry a tool could read is
 * checked against the path rules of domain/render/path-safety.ts, so nothing outside the
 * repository checkout can reach a render, an error message or a values layer.
 *
 * - The walk starts at the rendered folder and lists everything under it, hidden entries too
 *   (helm reads them; `.helmignore` is helm's business, not a boundary).
 * - A symbolic link is allowed when its target is relative and stays inside the checkout (the
 *   rule Flux's and Argo CD's repository checks apply); its real path must be inside too. A link
 *   to a folder is followed and that folder is walked as well: helm follows links into folders
 *   (`charts/common -> ../../library/common` is a common monorepo layout).
 * - A link to a folder that contains the link (a loop) is refused: helm would walk it until the
 *   path is too long. For Helm the walk also bounds the number of paths helm would visit with
 *   links followed (links to folders can multiply them).
 * - Regular files with more than one name (hard links), devices, FIFOs and sockets are refused.
 * - For Helm, every `.tgz` (a vendored chart under charts/) is opened and its entries checked:
 *   no links, no absolute or `..` names, nested archives too.
 *
 * A refusal is a `RenderError` (Applied False/DeployFailed, `failure.stage: Rendering`) whose
 * message names the entry by its path in the checkout and says why; it never quotes a target.
 */
import { lstat, readdir, readFile, readlink, realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { RenderError } from '../../domain/render/errors.ts';
import {
  archiveEntryProblem,
  entryProblem,
  isWithin,
  linkTargetProblem,
  refusalMessage,
  relativePathProblem,
} from '../../domain/render/path-safety.ts';
import { readTarEntries, TarFormatError } from '../../domain/render/tar-entries.ts';

/** Paths helm would visit in one chart, links followed; far above any real chart (hundreds). */
export const MAX_CHART_PATHS = 20_000;
/** A vendored chart archive larger than this (compressed, or once gunzipped ×4) is refused. */
const MAX_ARCHIVE_BYTES = 64 * 1024 * 1024;
const MAX_ARCHIVE_DEPTH = 4;

export interface ContentCheckOptions {
  /** The checkout root: nothing outside it may be reached. Default: the folder itself. */
  root?: string | undefined;
  /** Helm's reach: open vendored `.tgz` archives and bound the paths helm would visit. */
  helm?: boolean;
}

/** Real paths of the checked folder and of its checkout root. */
export interface CheckedContent {
  root: string;
  dir: string;
}

/** `what` names the entry in the message; `file` (default `what`) is the file on disk it is in. */
function refuse(what: string, why: string, file = what): never {
  throw new RenderError(refusalMessage({ file: what, why }), { file });
}

/** A real path shown relative to the checkout root, with `/` separators. */
function shown(root: string, path: string): string {
  return relative(root, path).split(sep).join('/') || '.';
}

async function realFolder(path: string, what: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    throw new RenderError(`${what} ${path} does not exist or cannot be read`, { cause: error });
  }
}

interface Walk {
  root: string;
  helm: boolean;
  /** The folder being checked, as shown: what a refusal of the whole folder names. */
  start: string;
  /** Folders being walked (by real path): a link back to one of them is a loop. */
  open: Set<string>;
  /** Paths helm would visit below each folder already walked (by real path). */
  done: Map<string, number>;
}

function checkFile(walk: Walk, file: string, info: Stats): void {
  const kind = info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other';
  const why = entryProblem({ kind, nlink: info.nlink });
  if (why !== undefined) refuse(file, why);
}

/** `what` names the archive (nested: with its entry); `file` is the archive file in the checkout. */
function checkArchive(what: string, file: string, bytes: Uint8Array, depth: number): void {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return; // not gzip: helm refuses it itself
  let tar: Buffer;
  try {
    tar = gunzipSync(bytes, { maxOutputLength: 4 * MAX_ARCHIVE_BYTES });
  } catch (error) {
    if (error instanceof RangeError)
      refuse(what, 'is a chart archive too large to check once unpacked', file);
    return; // corrupt gzip: helm says so itself
  }
  let entries;
  try {
    entries = readTarEntries(tar);
  } catch (error) {
    if (error instanceof TarFormatError)
      refuse(what, `is not a chart archive convoy can check (${error.message})`, file);
    throw error;
  }
  for (const entry of entries) {
    const name = JSON.stringify(entry.name.length > 200 ? `${entry.name.slice(0, 200)}…` : entry.name);
    const inner = `${what} (entry ${name})`;
    const why = archiveEntryProblem(entry);
    if (why !== undefined) refuse(inner, why, file);
    if (entry.type === 'file' && entry.name.endsWith('.tgz')) {
      if (depth >= MAX_ARCHIVE_DEPTH) refuse(inner, 'nests chart archives too deep', file);
      checkArchive(inner, file, entry.data, depth + 1);
    }
  }
}

async function checkChartArchive(file: string, path: string, info: Stats): Promise<void> {
  if (info.size > MAX_ARCHIVE_BYTES) refuse(file, 'is a chart archive too large to check');
  checkArchive(file, file, await readFile(path), 1);
}

/** Walks the real folder `dir`; returns the number of paths below it with links followed. */
async function walkFolder(walk: Walk, dir: string): Promise<number> {
  const known = walk.done.get(dir);
  if (known !== undefined) return known;
  walk.open.add(dir);
  let paths = 0;
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // The link counts of a folder's files, read at once (the checks below stay in name order).
  const counted = await Promise.all(
    entries.map((entry) =>
      entry.isSymbolicLink() || entry.isDirectory()
        ? Promise.resolve(undefined)
        : lstat(join(dir, entry.name)),
    ),
  );
  for (const [index, entry] of entries.entries()) {
    const path = join(dir, entry.name);
    const file = shown(walk.root, path);
    paths += 1;
    if (entry.isSymbolicLink()) {
      const why = linkTargetProblem(file, await readlink(path));
      if (why !== undefined) refuse(file, why);
      let target: string;
      try {
        target = await realpath(path);
      } catch {
        refuse(file, 'is a symbolic link that leads nowhere (its target does not exist, or links loop)');
      }
      // Each link is checked as it is met; this catches what lexical resolution cannot see.
      if (!isWithin(walk.root, target))
        refuse(file, 'is a symbolic link that leads outside the repository checkout');
      const info = await stat(target);
      if (info.isDirectory()) {
        if (walk.open.has(target)) refuse(file, 'is a symbolic link to a folder that contains it (a loop)');
        paths += await walkFolder(walk, target);
      } else {
        checkFile(walk, file, info);
        if (walk.helm && entry.name.endsWith('.tgz')) await checkChartArchive(file, target, info);
      }
    } else if (entry.isDirectory()) {
      paths += await walkFolder(walk, path);
    } else {
      const info = counted[index] ?? (await lstat(path));
      checkFile(walk, file, info);
      if (walk.helm && entry.isFile() && entry.name.endsWith('.tgz'))
        await checkChartArchive(file, path, info);
    }
    if (walk.helm && paths > MAX_CHART_PATHS) {
      refuse(
        walk.start,
        `holds more than ${MAX_CHART_PATHS} files and folders once symbolic links are followed`,
      );
    }
  }
  walk.open.delete(dir);
  walk.done.set(dir, paths);
  return paths;
}

/** A walk of one checkout: each folder is listed once however many times it is checked. */
export interface ContentWalk {
  /** The real path of the checkout root. */
  root: string;
  /** Checks the folder `dir` and everything below it; returns its real path. */
  check(dir: string): Promise<string>;
}

export async function openContentWalk(root: string, options: { helm?: boolean } = {}): Promise<ContentWalk> {
  const realRoot = await realFolder(root, 'the checkout');
  const walk: Walk = {
    root: realRoot,
    helm: options.helm === true,
    start: '.',
    open: new Set(),
    done: new Map(),
  };
  return {
    root: realRoot,
    async check(dir) {
      const real = await realFolder(dir, 'the rendered folder');
      if (!isWithin(realRoot, real)) refuse('the rendered folder', 'is outside the repository checkout');
      walk.start = shown(realRoot, real);
      await walkFolder(walk, real);
      return real;
    },
  };
}

/**
 * Checks everything a tool could read from the folder `dir` (see the file comment). Throws a
 * `RenderError` naming the first entry refused; returns the real paths of `dir` and the root.
 */
export async function checkContentTree(
  dir: string,
  options: ContentCheckOptions = {},
): Promise<CheckedContent> {
  const walk = await openContentWalk(options.root ?? dir, options);
  return { root: walk.root, dir: await walk.check(dir) };
}

/**
 * Reads the file `path` (relative, no `..`) of the checkout at `root` — a values layer from a
 * GitRepository — under the same rules: every link on the way relative and inside the checkout,
 * a regular file with one name. undefined when it does not exist (inside the checkout).
 */
export async function readCheckoutFile(root: string, path: string): Promise<string | undefined> {
  const why = relativePathProblem(path);
  if (why !== undefined) refuse(path, why);
  const realRoot = await realFolder(root, 'the checkout');
  let current = realRoot;
  for (const part of path.split('/').filter((p) => p !== '' && p !== '.')) {
    const next = join(current, part);
    let info: Stats;
    try {
      info = await lstat(next);
    } catch (error) {
      if (
        (error as NodeJS.ErrnoException).code === 'ENOENT' ||
        (error as NodeJS.ErrnoException).code === 'ENOTDIR'
      )
        return undefined;
      throw error;
    }
    if (!info.isSymbolicLink()) {
      current = next;
      continue;
    }
    const problem = linkTargetProblem(shown(realRoot, next), await readlink(next));
    if (problem !== undefined) refuse(path, problem.replace(/^is /, 'is or passes through '));
    try {
      current = await realpath(next);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      refuse(path, 'is or passes through a symbolic link that loops');
    }
    if (!isWithin(realRoot, current))
      refuse(path, 'is or passes through a symbolic link that leads outside the repository checkout');
  }
  const info = await stat(current);
  if (info.isDirectory()) refuse(path, 'is a folder, not a file');
  const problem = entryProblem({ kind: info.isFile() ? 'file' : 'other', nlink: info.nlink });
  if (problem !== undefined) refuse(path, problem);
  return readFile(current, 'utf8');
}
