// `npm run test:soak`: a flake hunt a reviewer can repeat (not part of CI). Runs a vitest project
// (default `integration`, or only the files given) N times, each run on its own under
// `flock <lock>` so heavy runs of several people on one machine never overlap, optionally with a
// CPU hog taking one core for the length of the run, and prints per test how many of the N runs
// it failed, read from vitest's JSON reporter (`--reporter=json --outputFile.json=…`).
//
//   node scripts/soak.ts [--runs 5] [--hog] [--project integration] [--lock /tmp/convoy-integration.lock]
//                        [--no-lock] [--out DIR] [--vitest-arg --maxWorkers=2 …] [test files…]
//
// --hog: `stress-ng --cpu 1` (Debian: apt-get install -y stress-ng) while a run holds the lock;
// without stress-ng, a busy-looping node process. Every run's output and JSON report stay in
// --out (default: a fresh /tmp/convoy-soak-* folder). --vitest-arg (repeatable) is passed to vitest as is.
//
// Output (stdout; progress goes to stderr):
//
//   soak: 3 runs of vitest --project integration, hog: stress-ng --cpu 1, files: test/integration/relay.test.ts …
//   run 1/3: exit 1, 41 passed, 1 failed, 0 skipped, 212.4 s with the lock held (output /tmp/convoy-soak-x/run-1.log)
//   …
//   failures out of 3, per test (worst first):
//     1/3  test/integration/relay.test.ts > the relay > 200 quick label updates …
//          run 1: AssertionError: expected 21 to be less than 20
//     0/3  test/integration/relay.test.ts > the relay > deleting a Release sends a reconcile …
//   time per file (mean of the runs that reported it; its tests and hooks, from vitest's JSON report):
//      61.2 s  test/integration/queue-e2e.test.ts
//   soak: 1 of 42 tests failed at least once in 3 runs (hog: stress-ng --cpu 1)
//
// A test missing from a run's report (its file did not load, or the run died) counts as a failure
// of that run, as does a run that wrote no report at all ("(the run)"). Exits 1 when any test
// failed in any run, 0 otherwise.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs, stripVTControlCharacters } from 'node:util';

const root = join(import.meta.dirname, '..');

/** The parts of vitest's JSON report (Jest's format) this script reads. */
interface JsonReport {
  testResults?: {
    name: string;
    status?: string;
    message?: string;
    startTime?: number;
    endTime?: number;
    assertionResults?: {
      ancestorTitles?: string[];
      title: string;
      status: string;
      failureMessages?: string[];
    }[];
  }[];
}

interface RunResult {
  readonly exit: number | null;
  /** test → its state in this run; undefined when the run wrote no report. */
  readonly tests: Map<string, { passed: boolean; skipped: boolean; message: string }> | undefined;
  readonly fileMs: Map<string, number>;
  readonly ms: number;
}

class SoakUsageError extends Error {
  override name = 'SoakUsageError';
}

function hogCommand(wanted: boolean): { mode: 'none' | 'stress-ng' | 'node'; label: string } {
  if (!wanted) return { mode: 'none', label: 'none' };
  if (spawnSync('stress-ng', ['--version'], { stdio: 'ignore' }).status === 0)
    return { mode: 'stress-ng', label: 'stress-ng --cpu 1' };
  return {
    mode: 'node',
    label: 'a busy-looping node process (stress-ng is not installed: apt-get install -y stress-ng)',
  };
}

/**
 * One run, as a shell under flock: start the hog, run vitest, stop the hog. The hog runs only
 * while the lock is held, so a waiting soak never loads the machine.
 */
const RUN_SCRIPT = `
date +%s%3N > "$3"
hog=
stop_hog() { if [ -n "$hog" ]; then kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null; hog=; fi; }
trap stop_hog EXIT
trap 'stop_hog; exit 130' HUP INT TERM PIPE
case "$1" in
  stress-ng) stress-ng --cpu 1 --timeout 3h --quiet & hog=$! ;;
  node) "$2" -e 'setTimeout(() => process.exit(0), 3 * 3600 * 1000); for (;;) {}' & hog=$! ;;
esac
shift 3
"$@"
`;

async function runOnce(
  index: number,
  opts: {
    project: string;
    files: string[];
    vitestArgs: string[];
    hog: 'none' | 'stress-ng' | 'node';
    lock: string | undefined;
    out: string;
  },
): Promise<RunResult> {
  const report = join(opts.out, `run-${index}.json`);
  const vitest = [
    process.execPath,
    join(root, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    '--project',
    opts.project,
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
    '--reporter=./test/harness/summary-reporter.ts',
    ...opts.vitestArgs,
    ...opts.files,
  ];
  // The shell writes when it started, i.e. when the lock was held: the run's time leaves out the wait.
  const startedFile = join(opts.out, `run-${index}.started`);
  const shell = ['sh', '-c', RUN_SCRIPT, 'soak-run', opts.hog, process.execPath, startedFile, ...vitest];
  const [command, ...args] = opts.lock === undefined ? shell : ['flock', opts.lock, ...shell];
  const log = createWriteStream(join(opts.out, `run-${index}.log`));
  const exit = await new Promise<number | null>((resolve, reject) => {
    // Its own process group, so that stopping the soak stops flock, the shell, vitest and the hog.
    const child = spawn(command ?? 'sh', args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const stop = () => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      process.exit(130);
    };
    process.once('SIGINT', stop).once('SIGTERM', stop);
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('error', reject);
    child.on('close', (code) => {
      process.off('SIGINT', stop).off('SIGTERM', stop);
      resolve(code);
    });
  });
  log.end();
  const lockedAt = Number((await readFile(startedFile, 'utf8').catch(() => '')).trim());
  const ms = Number.isFinite(lockedAt) && lockedAt > 0 ? Date.now() - lockedAt : Number.NaN;
  let parsed: JsonReport;
  try {
    parsed = JSON.parse(await readFile(report, 'utf8')) as JsonReport;
  } catch {
    return { exit, tests: undefined, fileMs: new Map(), ms };
  }
  const tests = new Map<string, { passed: boolean; skipped: boolean; message: string }>();
  const fileMs = new Map<string, number>();
  for (const file of parsed.testResults ?? []) {
    const path = relative(root, file.name);
    if (file.startTime !== undefined && file.endTime !== undefined)
      fileMs.set(path, file.endTime - file.startTime);
    const assertions = file.assertionResults ?? [];
    // A file can fail outside its tests (import, beforeAll, afterAll): its tests then read as
    // skipped or passed. It is a row of its own, "<file> > (the file)", in every run.
    const failedOutside = file.status === 'failed' && !assertions.some((a) => a.status === 'failed');
    tests.set(`${path} > (the file)`, {
      passed: !failedOutside,
      skipped: false,
      message: failedOutside
        ? firstLine(file.message || `the file failed outside its tests; see run-${index}.log`)
        : '',
    });
    for (const a of assertions) {
      const name = [path, ...(a.ancestorTitles ?? []), a.title].join(' > ');
      tests.set(name, {
        passed: a.status === 'passed',
        skipped: a.status === 'skipped' || a.status === 'pending' || a.status === 'todo',
        message: firstLine(
          (a.failureMessages ?? []).join('\n') || (a.status === 'failed' ? (file.message ?? '') : ''),
        ),
      });
    }
  }
  return { exit, tests, fileMs, ms };
}

function firstLine(text: string): string {
  // ANSI colours off, and the first line that says something.
  const line =
    stripVTControlCharacters(text)
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? '';
  return line.length > 240 ? `${line.slice(0, 239)}…` : line;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      runs: { type: 'string', default: '5' },
      hog: { type: 'boolean', default: false },
      project: { type: 'string', default: 'integration' },
      lock: { type: 'string', default: '/tmp/convoy-integration.lock' },
      'no-lock': { type: 'boolean', default: false },
      out: { type: 'string' },
      'vitest-arg': { type: 'string', multiple: true, default: [] },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1)
    throw new SoakUsageError(`--runs must be a positive integer, got ${values.runs}`);
  const hog = hogCommand(values.hog);
  const lock = values['no-lock'] ? undefined : values.lock;
  if (lock !== undefined && spawnSync('flock', ['--version'], { stdio: 'ignore' }).status !== 0) {
    throw new SoakUsageError('flock (util-linux) is not installed; install it or pass --no-lock');
  }
  const out = values.out ?? (await mkdtemp(join(tmpdir(), 'convoy-soak-')));
  await mkdir(out, { recursive: true });
  const files = positionals;

  const vitestArgs = values['vitest-arg'];
  process.stdout.write(
    `soak: ${runs} runs of vitest --project ${values.project}${vitestArgs.length > 0 ? ` ${vitestArgs.join(' ')}` : ''}, hog: ${hog.label}, files: ${files.length > 0 ? files.join(' ') : '(all of the project)'}\n`,
  );
  const results: RunResult[] = [];
  for (let i = 1; i <= runs; i++) {
    process.stderr.write(`soak: run ${i}/${runs}${lock !== undefined ? ` (waiting for ${lock})` : ''}…\n`);
    const r = await runOnce(i, { project: values.project, files, vitestArgs, hog: hog.mode, lock, out });
    results.push(r);
    // The per-file rows count only when their file failed outside its tests.
    const states = [...(r.tests ?? [])]
      .filter(([name, s]) => !name.endsWith(' > (the file)') || !s.passed)
      .map(([, s]) => s);
    const counts =
      r.tests === undefined
        ? 'no JSON report'
        : `${states.filter((s) => s.passed).length} passed, ${states.filter((s) => !s.passed && !s.skipped).length} failed, ${states.filter((s) => s.skipped).length} skipped`;
    process.stdout.write(
      `run ${i}/${runs}: exit ${r.exit ?? 'signal'}, ${counts}, ${(r.ms / 1000).toFixed(1)} s with the lock held (output ${join(out, `run-${i}.log`)})\n`,
    );
  }

  // Every test any run reported; a test a run did not report failed that run.
  const names = new Set<string>();
  for (const r of results) for (const name of r.tests?.keys() ?? []) names.add(name);
  const rows = [...names].map((name) => {
    const failures: string[] = [];
    let skipped = 0;
    results.forEach((r, i) => {
      const state = r.tests?.get(name);
      if (state?.skipped === true) skipped++;
      else if (state === undefined)
        failures.push(
          `run ${i + 1}: ${r.tests === undefined ? 'the run wrote no report' : 'not in the report'}`,
        );
      else if (!state.passed) failures.push(`run ${i + 1}: ${state.message}`);
    });
    return { name, failures, skipped };
  });
  const dead = results.flatMap((r, i) =>
    r.tests === undefined ? [`run ${i + 1}: no JSON report (exit ${r.exit ?? 'signal'})`] : [],
  );
  if (dead.length > 0) rows.push({ name: '(the run)', failures: dead, skipped: 0 });
  rows.sort((a, b) => b.failures.length - a.failures.length || a.name.localeCompare(b.name));
  // A file's own row is news only when the file failed outside its tests.
  const shown = rows.filter((row) => !row.name.endsWith(' > (the file)') || row.failures.length > 0);

  process.stdout.write(`failures out of ${runs}, per test (worst first):\n`);
  for (const row of shown) {
    process.stdout.write(
      `  ${`${row.failures.length}/${runs}`.padStart(5)}  ${row.name}${row.skipped > 0 ? ` (skipped in ${row.skipped})` : ''}\n`,
    );
    for (const failure of row.failures) process.stdout.write(`         ${failure}\n`);
  }
  const fileMs = new Map<string, number[]>();
  for (const r of results)
    for (const [file, ms] of r.fileMs) fileMs.set(file, [...(fileMs.get(file) ?? []), ms]);
  process.stdout.write(
    "time per file (mean of the runs that reported it; its tests and hooks, from vitest's JSON report):\n",
  );
  const means = [...fileMs].map(([file, list]) => ({
    file,
    ms: list.reduce((a, b) => a + b, 0) / list.length,
  }));
  for (const { file, ms } of means.sort((a, b) => b.ms - a.ms))
    process.stdout.write(`  ${`${(ms / 1000).toFixed(1)} s`.padStart(8)}  ${file}\n`);
  const failing = shown.filter((r) => r.failures.length > 0).length;
  process.stdout.write(
    `soak: ${failing} of ${shown.length} tests failed at least once in ${runs} runs (hog: ${hog.label})\n`,
  );
  return failing > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`soak: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  },
);
