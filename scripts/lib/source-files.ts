// The repository's source files and their lengths, for the file-length check of `npm run lint`
// (scripts/lint.ts) and the figures of scripts/arch-figures.ts.
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

/** A file longer than this is doing more than one thing; split it by what changes together. */
export const FILE_LINE_LIMIT = 400;

/**
 * Source files allowed past FILE_LINE_LIMIT, each with the reason. The check fails when a listed
 * file is back under the limit, so the list only ever names files that need it.
 */
export const LONG_FILE_EXCEPTIONS: Readonly<Record<string, string>> = {};

/** A function whose own lines (nested functions not counted) pass this does too much in one place. */
export const FUNCTION_LINE_LIMIT = 100;

/**
 * Functions allowed past FUNCTION_LINE_LIMIT, keyed `file:name` (as scripts/function-lengths.ts
 * names them), each with the reason. The check fails when a listed function is gone or back under.
 */
export const LONG_FUNCTION_EXCEPTIONS: Readonly<Record<string, string>> = {};

/** Top-level folders held to the function limit as figures only: tests, benchmarks, repository scripts. */
const NOT_PRODUCT = new Set(['test', 'bench', 'scripts']);

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

/** The top-level folders of shipped code under root: every folder with source in it but the tests, bench and scripts. */
export async function productFolders(root: string): Promise<string[]> {
  const folders = new Set<string>();
  for (const file of await listSourceFiles(root)) {
    const top = file.path.split('/')[0] ?? '';
    if (file.path.includes('/') && !NOT_PRODUCT.has(top)) folders.add(top);
  }
  return [...folders].sort();
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

/** A function over FUNCTION_LINE_LIMIT own lines, as scripts/function-lengths.ts reports it. */
export interface LongFunction {
  file: string;
  name: string;
  line: number;
  ownLines: number;
}

/** The functions over FUNCTION_LINE_LIMIT own lines in `folders` of root (scripts/function-lengths.ts). */
export function measureLongFunctions(root: string, folders: readonly string[]): LongFunction[] {
  if (folders.length === 0) return [];
  const script = join(import.meta.dirname, '..', 'function-lengths.ts');
  const args = [script, '--json', '--max', String(FUNCTION_LINE_LIMIT), ...folders];
  const out = execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 });
  return JSON.parse(out) as LongFunction[];
}

export const functionKey = (f: LongFunction): string => `${f.file}:${f.name}`;

export interface FunctionLengthReport {
  over: LongFunction[];
  excepted: LongFunction[];
  /** Listed exceptions no longer over the limit (or gone): the list should drop them. */
  staleExceptions: string[];
}

export function checkFunctionLengths(
  long: readonly LongFunction[],
  exceptions: Readonly<Record<string, string>> = LONG_FUNCTION_EXCEPTIONS,
): FunctionLengthReport {
  const keys = new Set(long.map(functionKey));
  return {
    over: long.filter((f) => !(functionKey(f) in exceptions)),
    excepted: long.filter((f) => functionKey(f) in exceptions),
    staleExceptions: Object.keys(exceptions).filter((key) => !keys.has(key)),
  };
}
