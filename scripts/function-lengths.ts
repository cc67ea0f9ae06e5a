// Lists functions longer than a limit of their *own* lines: the lines of a function's body less the
// lines of the functions nested in it (each nested function is measured on its own), so a long
// function is one whose own code is long, not one that holds long callbacks.
//
//   node scripts/function-lengths.ts [--max 100] [--json] [--check] [folder or file ...]
//
// Folders default to `domain`. Prints the offenders (a table, or JSON with --json), longest first;
// --check exits 1 when there is any. Counts every line of the body, blank and comment lines included.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import ts from 'typescript';

export interface FunctionLength {
  file: string;
  name: string;
  /** 1-based line of the function's start. */
  line: number;
  /** Lines of the body, less the lines of the functions nested in it. */
  ownLines: number;
}

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.FunctionExpression
  | ts.ArrowFunction
  | ts.MethodDeclaration
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration;

function isFunctionNode(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

function lineOf(source: ts.SourceFile, pos: number): number {
  return source.getLineAndCharacterOfPosition(pos).line;
}

/** Lines from the node's first token to its end, inclusive. */
function spanLines(source: ts.SourceFile, node: ts.Node): number {
  return lineOf(source, node.getEnd()) - lineOf(source, node.getStart(source)) + 1;
}

function nameOf(node: FunctionNode, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return node.name.getText(source);
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return parent.name.getText(source);
  }
  return `<anonymous>`;
}

/** The functions directly nested in `node` (not inside another nested function). */
function nestedFunctions(node: ts.Node): FunctionNode[] {
  const found: FunctionNode[] = [];
  const visit = (child: ts.Node): void => {
    if (isFunctionNode(child)) found.push(child);
    else ts.forEachChild(child, visit);
  };
  ts.forEachChild(node, visit);
  return found;
}

/** Every function of one file with its own line count. */
export function functionLengths(file: string, text: string): FunctionLength[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: FunctionLength[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunctionNode(node) && node.body !== undefined) {
      const nested = nestedFunctions(node.body).reduce((sum, f) => sum + spanLines(source, f), 0);
      out.push({
        file,
        name: nameOf(node, source),
        line: lineOf(source, node.getStart(source)) + 1,
        ownLines: spanLines(source, node.body) - nested,
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

async function tsFiles(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return path.endsWith('.ts') ? [path] : [];
  const entries = await readdir(path, { withFileTypes: true });
  const nested = await Promise.all(
    entries
      .filter((e) => e.name !== 'node_modules' && !e.name.startsWith('.'))
      .map((e) =>
        e.isDirectory()
          ? tsFiles(join(path, e.name))
          : Promise.resolve(e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [join(path, e.name)] : []),
      ),
  );
  return nested.flat();
}

/** Functions over `max` own lines under the given folders or files, longest first. */
export async function longFunctions(paths: readonly string[], max: number): Promise<FunctionLength[]> {
  const files = (await Promise.all(paths.map(tsFiles))).flat().sort();
  const all = await Promise.all(
    files.map(async (f) => functionLengths(relative(process.cwd(), f), await readFile(f, 'utf8'))),
  );
  return all
    .flat()
    .filter((f) => f.ownLines > max)
    .sort((a, b) => b.ownLines - a.ownLines || a.file.localeCompare(b.file));
}

function parseArgs(argv: readonly string[]): { max: number; json: boolean; check: boolean; paths: string[] } {
  const paths: string[] = [];
  let max = 100;
  let json = false;
  let check = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--json') json = true;
    else if (arg === '--check') check = true;
    else if (arg === '--max') {
      max = Number(argv[++i]);
      if (!Number.isSafeInteger(max) || max < 1)
        throw new Error(`--max takes a whole number of at least 1, not ${argv[i] ?? 'nothing'}`);
    } else if (arg.startsWith('--'))
      throw new Error(`unknown option ${arg}; options: --max N, --json, --check`);
    else paths.push(arg);
  }
  return { max, json, check, paths: paths.length > 0 ? paths : ['domain'] };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { max, json, check, paths } = parseArgs(process.argv.slice(2));
  const offenders = await longFunctions(paths, max);
  if (json) console.log(JSON.stringify(offenders, null, 2));
  else if (offenders.length === 0) console.log(`no function over ${max} own lines in ${paths.join(', ')}`);
  else {
    console.log(`functions over ${max} own lines in ${paths.join(', ')}:`);
    for (const f of offenders)
      console.log(`${String(f.ownLines).padStart(5)}  ${f.file}:${f.line}  ${f.name}`);
  }
  if (check && offenders.length > 0) process.exit(1);
}
