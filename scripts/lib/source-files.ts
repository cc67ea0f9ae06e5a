// The repository's source files and their lengths, for the file-length check of `npm run lint`
// (scripts/lint.ts) and the figures of scripts/arch-figures.ts.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** A file longer than this is doing more than one thing; split it by what changes together. */
export const FILE_LINE_LIMIT = 400;

/**
 * Source files allowed past FILE_LINE_LIMIT, each with the reason. The check fails when a listed
 * file is back under the limit, so the list only ever names files that need it.
 */
export const LONG_FILE_EXCEPTIONS: Readonly<Record<string, string>> = {};

/** Folders that are never source: dependencies, build output, generated and vendored files. */
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'cdk.out', 'coverage', '.git', '.tools', '.convoy']);

/** Inputs of tests (test/unit/lint/ keeps deliberately rule-breaking code there), not this repository's code. */
const FIXTURES = 'test/fixtures/';

const SOURCE_FILE = /\.(ts|js|mjs|cjs)$/;

export interface SourceFile {
  /** Relative to the root, with forward slashes. */
  path: string;
  lines: number;
  /** Under test/ or named *.test.ts: held to the limit only as a figure, not by the check. */
  test: boolean;
}

/** Lines as `wc -l` counts them, plus a last line without a newline. */
export function countLines(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

async function walk(root: string, dir: string, out: string[]): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (SKIPPED_FOLDERS.has(entry.name)) continue;
      await walk(root, join(dir, entry.name), out);
    } else if (entry.isFile() && SOURCE_FILE.test(entry.name)) {
      out.push(relative(root, join(dir, entry.name)).split(sep).join('/'));
    }
  }
}

/** Every source file under root (its fixtures for the lint test excluded), sorted by path. */
export async function listSourceFiles(root: string): Promise<SourceFile[]> {
  const paths: string[] = [];
  await walk(root, root, paths);
  const files: SourceFile[] = [];
  for (const path of paths.sort()) {
    if (path.startsWith(FIXTURES)) continue;
    const lines = countLines(await readFile(join(root, path), 'utf8'));
    files.push({ path, lines, test: path.startsWith('test/') || /\.test\.ts$/.test(path) });
  }
  return files;
}

export interface FileLengthReport {
  /** Non-test files over the limit that are not listed as exceptions. */
  over: SourceFile[];
  /** Listed exceptions that are over the limit (allowed). */
  excepted: SourceFile[];
  /** Listed exceptions that are missing or back under the limit: the list should drop them. */
  staleExceptions: string[];
  /** Test files over the limit (a figure, not a failure). */
  testsOver: SourceFile[];
}

export function checkFileLengths(
  files: readonly SourceFile[],
  exceptions: Readonly<Record<string, string>> = LONG_FILE_EXCEPTIONS,
): FileLengthReport {
  const long = files.filter((f) => f.lines > FILE_LINE_LIMIT);
  const byPath = new Map(files.map((f) => [f.path, f]));
  return {
    over: long.filter((f) => !f.test && !(f.path in exceptions)),
    excepted: long.filter((f) => !f.test && f.path in exceptions),
    staleExceptions: Object.keys(exceptions).filter(
      (path) => (byPath.get(path)?.lines ?? 0) <= FILE_LINE_LIMIT,
    ),
    testsOver: long.filter((f) => f.test),
  };
}
