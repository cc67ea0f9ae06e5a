// The architecture's figures, measured rather than remembered: import circles, the arrows between
// folders that must not exist, file lengths. Reads the import graph with dependency-cruiser and the
// rules of .dependency-cruiser.js (the same run `npm run lint` checks), file lengths with
// scripts/lib/source-files.ts.
//
//   node scripts/arch-figures.ts             the figures as JSON on stdout
//   node scripts/arch-figures.ts --markdown  the same as a markdown block
//   node scripts/arch-figures.ts --write     the markdown block into docs/architecture.md, between
//                                            <!-- arch-figures:begin --> and <!-- arch-figures:end -->
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { format, resolveConfig } from 'prettier';
import {
  checkFileLengths,
  checkFunctionLengths,
  FILE_LINE_LIMIT,
  FUNCTION_LINE_LIMIT,
  listSourceFiles,
  measureLongFunctions,
  productFolders,
  type LongFunction,
  type SourceFile,
} from './lib/source-files.ts';

const root = resolve(import.meta.dirname, '..');
const DOC = join(root, 'docs', 'architecture.md');
const BEGIN = '<!-- arch-figures:begin -->';
const END = '<!-- arch-figures:end -->';

/** The parts of dependency-cruiser's JSON output this script reads. */
interface CruiseResult {
  modules: {
    source: string;
    coreModule?: boolean;
    dependencies: { resolved: string; coreModule: boolean; dependencyTypes: string[] }[];
  }[];
  summary: { violations: { rule: { name: string } }[] };
}

/** The arrows issue reviewers asked to see at zero: entry points leaning on each other. */
const WATCHED_ARROWS = [
  ['relay', 'cli'],
  ['relay', 'functions'],
  ['client', 'functions'],
] as const;

export interface Figures {
  commit: string;
  uncommittedChanges: boolean;
  /** Modules of this repository, and the imports between them. */
  modules: number;
  imports: number;
  /** Violations per rule of .dependency-cruiser.js (0 for a rule nothing breaks). */
  violations: Record<string, number>;
  circles: { count: number; countWithoutTypeImports: number; groups: string[][] };
  /** File-to-file imports per watched folder pair, e.g. `relay→cli`. */
  arrows: Record<string, number>;
  /** Imports between top-level folders: from → to → count (imports inside a folder left out). */
  folderImports: Record<string, Record<string, number>>;
  files: { limit: number; over: SourceFile[]; excepted: SourceFile[]; testsOver: SourceFile[] };
  /** Functions over the limit of own lines: shipped code (a rule) and bench/, scripts/, test/ (a figure). */
  functions: {
    limit: number;
    over: LongFunction[];
    excepted: LongFunction[];
    notShippedOver: LongFunction[];
  };
}

function cruise(): CruiseResult {
  const bin = join(root, 'node_modules', '.bin', 'depcruise');
  const args = ['--config', join(root, '.dependency-cruiser.js'), '--output-type', 'json', '.'];
  // depcruise exits non-zero when a rule is broken; the JSON is complete either way.
  try {
    return JSON.parse(
      execFileSync(bin, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 28 }),
    ) as CruiseResult;
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout;
    if (stdout) return JSON.parse(stdout) as CruiseResult;
    throw error;
  }
}

const folderOf = (path: string): string => (path.includes('/') ? path.slice(0, path.indexOf('/')) : '.');

/** Local module → the local modules it imports (type-only imports optional). */
function localGraph(result: CruiseResult, withTypeImports: boolean): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const module of result.modules) {
    if (module.coreModule || module.source.includes('node_modules/')) continue;
    const targets = module.dependencies
      .filter((d) => !d.coreModule && !d.resolved.includes('node_modules/'))
      .filter((d) => withTypeImports || !d.dependencyTypes.includes('type-only'))
      .map((d) => d.resolved);
    graph.set(module.source, targets);
  }
  return graph;
}

/** Groups of modules that import each other in a loop (strongly connected components, Tarjan). */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      group.push(member);
      if (member === node) break;
    }
    if (group.length > 1 || (graph.get(node) ?? []).includes(node)) groups.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return groups.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

function folderImports(
  graph: ReadonlyMap<string, readonly string[]>,
): Record<string, Record<string, number>> {
  const counts: Record<string, Record<string, number>> = {};
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const [a, b] = [folderOf(from), folderOf(to)];
      if (a === b) continue;
      const row = (counts[a] ??= {});
      row[b] = (row[b] ?? 0) + 1;
    }
  }
  return counts;
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
}

export async function measure(): Promise<Figures> {
  const result = cruise();
  const graph = localGraph(result, true);
  const between = folderImports(graph);
  const violations: Record<string, number> = {};
  for (const v of result.summary.violations) violations[v.rule.name] = (violations[v.rule.name] ?? 0) + 1;
  const groups = importCircles(graph);
  const files = checkFileLengths(await listSourceFiles(root));
  const shipped = checkFunctionLengths(measureLongFunctions(root, await productFolders(root)));
  const notShipped = measureLongFunctions(root, ['bench', 'scripts', 'test']);
  return {
    commit: git(['rev-parse', '--short', 'HEAD']),
    uncommittedChanges: git(['status', '--porcelain', '--untracked-files=no']) !== '',
    modules: graph.size,
    imports: [...graph.values()].reduce((sum, targets) => sum + targets.length, 0),
    violations,
    circles: {
      count: groups.length,
      countWithoutTypeImports: importCircles(localGraph(result, false)).length,
      groups,
    },
    arrows: Object.fromEntries(WATCHED_ARROWS.map(([a, b]) => [`${a}→${b}`, between[a]?.[b] ?? 0])),
    folderImports: between,
    files: { limit: FILE_LINE_LIMIT, over: files.over, excepted: files.excepted, testsOver: files.testsOver },
    functions: {
      limit: FUNCTION_LINE_LIMIT,
      over: shipped.over,
      excepted: shipped.excepted,
      notShippedOver: notShipped,
    },
  };
}

const count =
  (rule: string) =>
  (f: Figures): number =>
    f.violations[rule] ?? 0;

/** The table's rows: what is counted, the rule of .dependency-cruiser.js that forbids it, the count. */
const ROWS: readonly (readonly [string, string, (f: Figures) => number])[] = [
  [
    'import circles (groups of modules importing each other in a loop)',
    'no-circular',
    (f) => f.circles.count,
  ],
  ['relay/ → cli/ imports', 'relay-not-cli', (f) => f.arrows['relay→cli'] ?? 0],
  ['relay/ → functions/ imports', 'relay-not-functions', (f) => f.arrows['relay→functions'] ?? 0],
  ['client/ → functions/ imports', 'client-not-functions', (f) => f.arrows['client→functions'] ?? 0],
  [
    'domain/ → another folder of the repository',
    'domain-imports-domain-only',
    count('domain-imports-domain-only'),
  ],
  [
    'domain/ → a Node built-in with I/O (fs, child_process, net, http, …)',
    'domain-is-pure-builtins',
    count('domain-is-pure-builtins'),
  ],
  [
    'domain/ → a package outside its allowlist (AWS, client-node, hono, undici, …)',
    'domain-is-pure-packages',
    count('domain-is-pure-packages'),
  ],
  [
    'adapters/ → a folder other than adapters/ and domain/',
    'adapters-import-domain-only',
    count('adapters-import-domain-only'),
  ],
  ['shipped code → test/', 'product-not-test', count('product-not-test')],
];

function functionList(functions: readonly LongFunction[]): string {
  return functions.length === 0
    ? 'none'
    : functions.map((f) => `\`${f.file}:${f.line}\` ${f.name} (${f.ownLines})`).join(', ');
}

function fileList(files: readonly SourceFile[]): string {
  return files.length === 0 ? 'none' : files.map((f) => `\`${f.path}\` (${f.lines})`).join(', ');
}

export function toMarkdown(f: Figures): string {
  const rows = ROWS.map(([what, rule, figure]) => `| ${what} | ${figure(f)} | \`${rule}\` |`);
  const folders = Object.keys(f.folderImports).sort();
  const arrows = folders.map(
    (from) =>
      `| ${from} | ${Object.entries(f.folderImports[from] ?? {})
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([to, n]) => `${to} ${n}`)
        .join(', ')} |`,
  );
  const fn = f.functions;
  const at = `${f.commit}${f.uncommittedChanges ? ' with uncommitted changes' : ''}`;
  return [
    BEGIN,
    `Measured at ${at} by \`node scripts/arch-figures.ts --write\` (dependency-cruiser with the rules of`,
    `\`.dependency-cruiser.js\`, the ones \`npm run lint\` enforces): ${f.modules} modules, ${f.imports} imports between them.`,
    '',
    '| figure | count | rule |',
    '| --- | --- | --- |',
    ...rows,
    `| import circles counting only runtime imports (not \`import type\`) | ${f.circles.countWithoutTypeImports} | |`,
    `| source files outside test/ over ${f.files.limit} lines | ${f.files.over.length} | file-lengths |`,
    `| of those, named exceptions | ${f.files.excepted.length} | file-lengths |`,
    `| test files over ${f.files.limit} lines (a figure, not a rule) | ${f.files.testsOver.length} | |`,
    `| functions of shipped code over ${fn.limit} own lines (nested functions apart) | ${fn.over.length + fn.excepted.length} | function-lengths |`,
    `| of those, named exceptions | ${fn.excepted.length} | function-lengths |`,
    `| functions over ${fn.limit} own lines in bench/, scripts/, test/ (a figure) | ${fn.notShippedOver.length} | |`,
    '',
    `Circles: ${f.circles.groups.length === 0 ? 'none' : f.circles.groups.map((g) => g.join(' ↔ ')).join('; ')}.`,
    '',
    `Files over ${f.files.limit} lines: ${fileList([...f.files.over, ...f.files.excepted])}; tests: ${fileList(f.files.testsOver)}.`,
    '',
    `Functions over ${fn.limit} own lines: ${functionList(fn.over)}; named exceptions: ${functionList(fn.excepted)}; ` +
      `in bench/, scripts/, test/: ${functionList(fn.notShippedOver)}.`,
    '',
    'Imports between folders (file-to-file imports, type-only ones included):',
    '',
    '| from | to (count) |',
    '| --- | --- |',
    ...arrows,
    END,
  ].join('\n');
}

async function writeInto(path: string, block: string): Promise<void> {
  const text = await readFile(path, 'utf8');
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start)
    throw new Error(`${path}: no ${BEGIN} … ${END} markers to write the figures between`);
  // Formatted as `npm run lint` checks it, so a fresh write passes the format check.
  const updated = text.slice(0, start) + block + text.slice(end + END.length);
  await writeFile(path, await format(updated, { ...(await resolveConfig(path)), filepath: path }));
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { markdown: { type: 'boolean' }, write: { type: 'boolean' } } });
  const figures = await measure();
  if (values.write) {
    await writeInto(DOC, toMarkdown(figures));
    console.error(`arch-figures: wrote the figures into ${DOC}`);
  } else if (values.markdown) {
    console.log(toMarkdown(figures));
  } else {
    console.log(JSON.stringify(figures, null, 2));
  }
}

if (import.meta.main) await main();
