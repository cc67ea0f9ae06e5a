// Lists the places that name a tracker issue ("issue 24 item 3", "(#13)", "issues 10/12") in the
// repository's files: code, comments, strings a user sees, docs. The reason for a change belongs
// in the text itself and the issue number in the commit message, where `git log` keeps it; this
// list is what is left to reword.
//
//   node scripts/tracker-refs.ts            one line per reference, then counts
//   node scripts/tracker-refs.ts --json     the same as JSON
//   node scripts/tracker-refs.ts --check    exits 1 when any reference is left
//
// Each reference is marked `string` when it sits inside a quoted string or template on its line
// (help text, messages, test names: what a user or a test report shows), `comment` otherwise in
// code, and `doc` in Markdown.
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = resolve(import.meta.dirname, '..');

/**
 * Generated from other files (their sources are listed instead), not prose, or this script, whose
 * own examples would list themselves.
 */
const SKIPPED = [
  /^package-lock\.json$/,
  /^deploy\//,
  /^charts\//,
  /^config\/crds\//,
  /^scripts\/tracker-refs\.ts$/,
];

const PATTERNS: readonly RegExp[] = [
  // issue 21, Issue 24 item 3, issues 10/12, issue 22 items 2 and 4
  /\bissues? \d+(?:\s*(?:\/|,|and)\s*\d+)*(?:\s+items?\s+\d+(?:\s*(?:\/|,|and)\s*\d+)*)?/gi,
  // (#4), ; #13 — but not an upstream project's own "kustomize-controller #701"
  /(?<![A-Za-z0-9-] )(?<![A-Za-z0-9])#\d{1,4}\b/g,
  /\btracker (?:issues?|items?|numbers?)\b/gi,
];

export type Kind = 'string' | 'comment' | 'doc';

export interface TrackerRef {
  path: string;
  line: number;
  text: string;
  match: string;
  kind: Kind;
}

/** A line that is all comment: `//`, a JSDoc or block comment line, or a shell comment. */
const COMMENT_LINE = /^\s*(\/\/|\/\*|\*|#)/;

/** Whether `index` on a code line is inside a '…', "…" or `…` string opened on that line. */
function insideString(line: string, index: number): boolean {
  if (COMMENT_LINE.test(line)) return false;
  let open: string | undefined;
  for (let i = 0; i < index; i++) {
    const c = line[i];
    if (c === '\\') i++;
    else if (open === undefined && line.startsWith('//', i)) return false;
    else if (open === undefined && (c === "'" || c === '"' || c === '`')) open = c;
    else if (c === open) open = undefined;
  }
  return open !== undefined;
}

export function findRefs(path: string, text: string): TrackerRef[] {
  const refs: TrackerRef[] = [];
  text.split('\n').forEach((line, i) => {
    for (const pattern of PATTERNS) {
      for (const m of line.matchAll(pattern)) {
        const kind: Kind = path.endsWith('.md') ? 'doc' : insideString(line, m.index) ? 'string' : 'comment';
        refs.push({ path, line: i + 1, text: line.trim(), match: m[0], kind });
      }
    }
  });
  return refs;
}

function repositoryFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  return [...new Set(listed.split('\n').filter(Boolean))]
    .filter((path) => !SKIPPED.some((skip) => skip.test(path)))
    .filter((path) => /\.(ts|js|mjs|cjs|md|sh|yaml|yml|json|txt)$/.test(path) || path === '.ci/run');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { json: { type: 'boolean' }, check: { type: 'boolean' } } });
  const refs: TrackerRef[] = [];
  for (const path of repositoryFiles()) {
    const text = await readFile(join(root, path), 'utf8').catch(() => undefined);
    if (text !== undefined) refs.push(...findRefs(path, text));
  }
  const files = new Set(refs.map((r) => r.path));
  const byKind = (kind: Kind): number => refs.filter((r) => r.kind === kind).length;
  const summary = {
    references: refs.length,
    files: files.size,
    string: byKind('string'),
    comment: byKind('comment'),
    doc: byKind('doc'),
  };
  if (values.json) {
    console.log(JSON.stringify({ summary, refs }, null, 2));
  } else {
    for (const r of refs)
      console.log(`${r.path}:${r.line}: [${r.kind}] ${r.match} — ${r.text.slice(0, 140)}`);
    console.log(
      `tracker-refs: ${summary.references} references in ${summary.files} files ` +
        `(${summary.string} in strings, ${summary.comment} in comments, ${summary.doc} in docs)`,
    );
  }
  if (values.check && refs.length > 0) process.exitCode = 1;
}

if (import.meta.main) await main();
