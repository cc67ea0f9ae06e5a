// `npm run lint` (scripts/lint.ts) bites: its checks, run with this repository's configurations on
// fixture trees, fail on the code each rule forbids and pass on code that keeps them. The fixtures
// live in test/fixtures/lint/, which the real lint run leaves out.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkFileLengths,
  checkFunctionLengths,
  countLines,
  type LongFunction,
  type SourceFile,
} from '../../../scripts/lib/source-files.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const fixtures = join(root, 'test', 'fixtures', 'lint');
/** Spawns several tools on a shared 2-core machine: generous, as a safety net, not a speed check. */
const SLOW = 180_000;

interface Run {
  status: number | null;
  output: string;
}

function lint(tree: string, checks: string): Run {
  const run = spawnSync(process.execPath, ['scripts/lint.ts', '--root', tree, '--only', checks], {
    cwd: root,
    encoding: 'utf8',
  });
  return { status: run.status, output: `${run.stdout}\n${run.stderr}` };
}

function tool(name: string, args: string[]): Run {
  const run = spawnSync(join(root, 'node_modules', '.bin', name), args, { cwd: root, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}\n${run.stderr}` };
}

describe('npm run lint', () => {
  it('is scripts/lint.ts, which runs eslint, the format check, the import boundaries, the file and the function lengths, and the tracker-reference check', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts['lint']).toBe('node scripts/lint.ts');
    const run = lint(fixtures, 'none');
    expect(run.status).toBe(2);
    expect(run.output).toContain(
      'the checks are eslint, format, boundaries, file-lengths, function-lengths, tracker-refs',
    );
  });
});

describe('the import boundaries', () => {
  let broken: Run;
  beforeAll(() => {
    broken = lint(join(fixtures, 'breaks-rules'), 'boundaries');
  }, SLOW);

  it('fail the lint run when a rule is broken', () => {
    expect(broken.status).toBe(1);
    expect(broken.output).toContain('lint: boundaries FAILED');
  });

  it.each([
    ['a domain file importing an adapter', 'domain-imports-domain-only: domain/plan.ts → adapters/store.ts'],
    ['a domain file reading the file system', 'domain-is-pure-builtins: domain/read-values.ts → fs'],
    [
      'a domain file importing the Kubernetes client (a type)',
      'domain-is-pure-packages: domain/kube-object.ts',
    ],
    ['an adapter importing the CLI', 'adapters-import-domain-only: adapters/store.ts → cli/print.ts'],
    ['the relay importing the CLI', 'relay-not-cli: relay/serve.ts → cli/print.ts'],
    ['the relay importing a function', 'relay-not-functions: relay/serve.ts → functions/handler.ts'],
    ['the client importing a function', 'client-not-functions: client/index.ts → functions/handler.ts'],
    ['shipped code importing a test helper', 'product-not-test: dev/runtime.ts → test/harness.ts'],
    ['two modules importing each other', 'no-circular: domain/circle-a.ts'],
  ])('name %s', (_, line) => {
    expect(broken.output).toContain(`error ${line}`);
  });

  it(
    'pass a tree whose domain uses only allowed modules and whose adapters and entry points point inwards',
    () => {
      const run = lint(join(fixtures, 'keeps-rules'), 'boundaries');
      expect(run.output).toContain('no dependency violations found');
      expect(run.status).toBe(0);
    },
    SLOW,
  );
});

describe('the format check', () => {
  it(
    'fails the lint run on code prettier would write differently',
    () => {
      const run = lint(join(fixtures, 'breaks-rules'), 'format');
      expect(run.status).toBe(1);
      expect(run.output).toContain('unformatted.ts');
      expect(run.output).toContain('lint: format FAILED');
    },
    SLOW,
  );

  it(
    'passes formatted code',
    () => {
      const run = lint(join(fixtures, 'keeps-rules'), 'format');
      expect(run.status).toBe(0);
    },
    SLOW,
  );
});

describe('the real lint run', () => {
  it(
    'leaves the fixtures out of the format check and the boundaries (they break the rules on purpose)',
    () => {
      expect(tool('prettier', ['--check', 'test/fixtures/lint/breaks-rules/unformatted.ts']).status).toBe(0);
      const cruise = tool('depcruise', [
        '--config',
        '.dependency-cruiser.js',
        'test/fixtures/lint/breaks-rules',
      ]);
      expect(cruise.output).toContain('no dependency violations found');
      expect(cruise.status).toBe(0);
    },
    SLOW,
  );
});

describe('the file lengths', () => {
  let tree: string;
  beforeAll(async () => {
    tree = await mkdtemp(join(tmpdir(), 'convoy-lint-'));
    const long = Array.from({ length: 401 }, (_, i) => `export const line${i} = ${i};\n`).join('');
    await mkdir(join(tree, 'domain'), { recursive: true });
    await mkdir(join(tree, 'test', 'unit'), { recursive: true });
    await writeFile(join(tree, 'domain', 'long.ts'), long);
    await writeFile(join(tree, 'domain', 'short.ts'), 'export const short = 1;\n');
    await writeFile(join(tree, 'test', 'unit', 'long.test.ts'), long);
  });
  afterAll(async () => {
    await rm(tree, { recursive: true, force: true });
  });

  it(
    'fail the lint run on a source file over 400 lines, naming it; a test file over 400 lines is only a figure',
    () => {
      const run = lint(tree, 'file-lengths');
      expect(run.status).toBe(1);
      expect(run.output).toContain('domain/long.ts: 401 lines, over the limit of 400');
      expect(run.output).not.toContain('test/unit/long.test.ts');
    },
    SLOW,
  );

  const files: SourceFile[] = [
    { path: 'domain/long.ts', lines: 401, test: false },
    { path: 'domain/short.ts', lines: 12, test: false },
    { path: 'test/unit/long.test.ts', lines: 900, test: true },
  ];

  it('allow a file named as an exception', () => {
    const report = checkFileLengths(files, { 'domain/long.ts': 'one table of every reason' });
    expect(report.over).toEqual([]);
    expect(report.excepted.map((f) => f.path)).toEqual(['domain/long.ts']);
    expect(report.testsOver.map((f) => f.path)).toEqual(['test/unit/long.test.ts']);
  });

  it('report an exception that is back under the limit or gone, so the list stays true', () => {
    const report = checkFileLengths(files, { 'domain/short.ts': 'was long', 'domain/gone.ts': 'moved' });
    expect(report.staleExceptions).toEqual(['domain/short.ts', 'domain/gone.ts']);
  });

  it('count lines as wc -l does, plus a last line without a newline', () => {
    expect(countLines('')).toBe(0);
    expect(countLines('a\nb\n')).toBe(2);
    expect(countLines('a\nb')).toBe(2);
  });
});

describe('the function lengths', () => {
  let tree: string;
  beforeAll(async () => {
    tree = await mkdtemp(join(tmpdir(), 'convoy-lint-'));
    // 101 own lines: the body's braces and 99 statements.
    const body = Array.from({ length: 99 }, (_, i) => `  total += ${i};\n`).join('');
    const long = `export function plan(): number {\n  let total = 0;\n${body}  return total;\n}\n`;
    // The same statements split between two named functions: neither is long.
    const half = Array.from({ length: 50 }, (_, i) => `  total += ${i};\n`).join('');
    const split = `function first(total: number): number {\n${half}  return total;\n}\nexport function plan(): number {\n  return first(0);\n}\n`;
    for (const folder of ['domain', 'adapters', 'bench'])
      await mkdir(join(tree, folder), { recursive: true });
    await writeFile(join(tree, 'domain', 'long.ts'), long);
    await writeFile(join(tree, 'adapters', 'split.ts'), split);
    await writeFile(join(tree, 'bench', 'long.ts'), long);
  });
  afterAll(async () => {
    await rm(tree, { recursive: true, force: true });
  });

  it(
    'fail the lint run on a function of shipped code over 100 own lines, naming it; bench/, scripts/ and test/ are figures only',
    () => {
      const run = lint(tree, 'function-lengths');
      expect(run.status).toBe(1);
      expect(run.output).toMatch(/domain\/long\.ts:1: plan has 10\d own lines, over the limit of 100/);
      expect(run.output).not.toContain('bench/long.ts');
      expect(run.output).not.toContain('adapters/split.ts');
    },
    SLOW,
  );

  const long: LongFunction[] = [{ file: 'infra/construct.ts', name: 'constructor', line: 10, ownLines: 140 }];

  it('allow a function named as an exception, keyed file:name', () => {
    const report = checkFunctionLengths(long, {
      'infra/construct.ts:constructor': 'one CDK construct wiring',
    });
    expect(report.over).toEqual([]);
    expect(report.excepted).toEqual(long);
  });

  it('report an exception that is no longer over the limit, so the list stays true', () => {
    const report = checkFunctionLengths(long, { 'dev/runtime.ts:startConvoyRuntime': 'was long' });
    expect(report.over).toEqual(long);
    expect(report.staleExceptions).toEqual(['dev/runtime.ts:startConvoyRuntime']);
  });
});
