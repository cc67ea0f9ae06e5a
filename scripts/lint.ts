// `npm run lint`: the habits the project relies on, checked by tools rather than by memory.
//
//   node scripts/lint.ts [--only eslint,format,boundaries,file-lengths,function-lengths,tracker-refs] [--root DIR]
//
//   eslint        eslint . (eslint.config.js)
//   format        prettier --check . (.prettierrc.json; .prettierignore lists generated files)
//   boundaries    depcruise with .dependency-cruiser.js: domain/ pure, adapters/ on domain/ only,
//                 the relay and client/ apart from cli/ and functions/, no product code importing
//                 test/, no import circles
//   file-lengths  no source file outside test/ over FILE_LINE_LIMIT lines, but for the exceptions
//                 named with their reason in scripts/lib/source-files.ts
//   function-lengths  no function of shipped code (every folder but test/, bench/, scripts/) over
//                 FUNCTION_LINE_LIMIT own lines (scripts/function-lengths.ts), but for the
//                 exceptions named with their reason in scripts/lib/source-files.ts
//   tracker-refs  no tracker-issue number in code, comments, user-visible strings or docs: the
//                 reason belongs in the text, the number in the commit message
//                 (scripts/tracker-refs.ts --check, over the tree that script lives in)
//
// Every check runs even when an earlier one failed, so one run shows everything to fix; the exit
// code is 1 when any failed. --root runs the checks in another tree with this repository's tools
// and configurations (test/unit/lint/ uses it on fixture trees to show that each rule bites).
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  checkFileLengths,
  checkFunctionLengths,
  FILE_LINE_LIMIT,
  FUNCTION_LINE_LIMIT,
  functionKey,
  LONG_FILE_EXCEPTIONS,
  LONG_FUNCTION_EXCEPTIONS,
  listSourceFiles,
  measureLongFunctions,
  productFolders,
} from './lib/source-files.ts';

const repo = resolve(import.meta.dirname, '..');

interface Check {
  name: string;
  /** Runs in `root`, printing what it finds; true when the tree passes. */
  run(root: string): boolean | Promise<boolean>;
}

function tool(name: string, args: readonly string[], root: string): boolean {
  const result = spawnSync(join(repo, 'node_modules', '.bin', name), args, { cwd: root, stdio: 'inherit' });
  if (result.error)
    throw new Error(`lint: could not start ${name} (run npm ci first): ${result.error.message}`);
  return result.status === 0;
}

async function fileLengths(root: string): Promise<boolean> {
  const report = checkFileLengths(await listSourceFiles(root), LONG_FILE_EXCEPTIONS);
  for (const file of report.over) {
    console.log(
      `${file.path}: ${file.lines} lines, over the limit of ${FILE_LINE_LIMIT}: split it by what changes ` +
        'together, or name it with the reason in LONG_FILE_EXCEPTIONS (scripts/lib/source-files.ts)',
    );
  }
  for (const path of report.staleExceptions) {
    console.log(
      `${path}: listed in LONG_FILE_EXCEPTIONS but not over ${FILE_LINE_LIMIT} lines (or gone): drop it`,
    );
  }
  return report.over.length === 0 && report.staleExceptions.length === 0;
}

async function functionLengths(root: string): Promise<boolean> {
  const folders = await productFolders(root);
  const report = checkFunctionLengths(measureLongFunctions(root, folders), LONG_FUNCTION_EXCEPTIONS);
  for (const f of report.over) {
    console.log(
      `${f.file}:${f.line}: ${f.name} has ${f.ownLines} own lines, over the limit of ${FUNCTION_LINE_LIMIT}: ` +
        `split it into named steps, or name ${functionKey(f)} with the reason in LONG_FUNCTION_EXCEPTIONS ` +
        '(scripts/lib/source-files.ts)',
    );
  }
  for (const key of report.staleExceptions) {
    console.log(
      `${key}: listed in LONG_FUNCTION_EXCEPTIONS but not over ${FUNCTION_LINE_LIMIT} own lines (or gone): drop it`,
    );
  }
  return report.over.length === 0 && report.staleExceptions.length === 0;
}

const CHECKS: readonly Check[] = [
  { name: 'eslint', run: (root) => tool('eslint', ['.'], root) },
  { name: 'format', run: (root) => tool('prettier', ['--check', '--log-level', 'warn', '.'], root) },
  {
    name: 'boundaries',
    run: (root) =>
      tool(
        'depcruise',
        ['--config', join(repo, '.dependency-cruiser.js'), '--output-type', 'err', '.'],
        root,
      ),
  },
  { name: 'file-lengths', run: fileLengths },
  { name: 'function-lengths', run: functionLengths },
  {
    name: 'tracker-refs',
    run: (root) =>
      spawnSync(process.execPath, [join(repo, 'scripts', 'tracker-refs.ts'), '--check'], {
        cwd: root,
        stdio: 'inherit',
      }).status === 0,
  },
];

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' }, root: { type: 'string' } } });
  const root = resolve(values.root ?? repo);
  const names = values.only?.split(',').map((name) => name.trim()) ?? CHECKS.map((check) => check.name);
  const unknown = names.filter((name) => !CHECKS.some((check) => check.name === name));
  if (unknown.length > 0) {
    console.error(
      `lint: unknown check ${unknown.join(', ')}; the checks are ${CHECKS.map((c) => c.name).join(', ')}`,
    );
    process.exit(2);
  }
  const failed: string[] = [];
  for (const check of CHECKS.filter((c) => names.includes(c.name))) {
    const started = performance.now();
    const passed = await check.run(root);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(`lint: ${check.name} ${passed ? 'passed' : 'FAILED'} (${seconds} s)`);
    if (!passed) failed.push(check.name);
  }
  if (failed.length > 0) {
    console.log(`lint: failed: ${failed.join(', ')}`);
    process.exit(1);
  }
}

await main();
