// Ends a test run with a per-file time table, so the slowest files are visible in CI's log, and
// then ONE plain closing line, "N passed, N failed, N skipped", that any CI can read (keep it last).
// Each project's line also gives its wall time: from the run's start (global setup included) to the
// end of its last file; the projects of one run share the workers, so their spans overlap.
//
// With CONVOY_TEST_TIMES=<file> (set by .ci/run) it also appends, for .ci/run's step table, one
// line per project "project<TAB>name<TAB>wall seconds<TAB>files" and one "counts<TAB>passed<TAB>failed<TAB>skipped".
//
//   test files by wall time (import, setup and tests; files of one project may run in parallel):
//     integration  412.3 s in 31 files, 250.1 s wall
//        61.2 s  test/integration/queue-e2e.test.ts
//        …       (the 12 slowest of each project, then one line for the rest)
//
//   1216 passed, 0 failed, 0 skipped
import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/** Rows per project; the rest of its files are summed on one line. */
const SLOWEST = 12;

/** A file's own wall time in its worker: environment, harness, import (with suite callbacks), setup files, tests and hooks. */
function fileMs(module: TestModule): number {
  const d = module.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`.padStart(8);

/** Per project: milliseconds from the run's start to the end of its last file. */
export type ProjectWalls = ReadonlyMap<string, number>;

export function timeTable(modules: ReadonlyArray<TestModule>, walls: ProjectWalls = new Map()): string {
  const byProject = new Map<string, { file: string; ms: number }[]>();
  for (const module of modules) {
    const rows = byProject.get(module.project.name) ?? [];
    rows.push({ file: module.relativeModuleId, ms: fileMs(module) });
    byProject.set(module.project.name, rows);
  }
  const lines = [
    'test files by wall time (import, setup and tests; files of one project may run in parallel):',
  ];
  for (const [project, rows] of [...byProject].sort(([a], [b]) => a.localeCompare(b))) {
    rows.sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file));
    const total = rows.reduce((sum, r) => sum + r.ms, 0);
    const wall = walls.get(project);
    const wallText = wall === undefined ? '' : `, ${seconds(wall).trim()} wall`;
    lines.push(`  ${project || '(no project)'}  ${seconds(total).trim()} in ${rows.length} files${wallText}`);
    for (const r of rows.slice(0, SLOWEST)) lines.push(`  ${seconds(r.ms)}  ${r.file}`);
    const rest = rows.slice(SLOWEST);
    if (rest.length > 0)
      lines.push(`  ${seconds(rest.reduce((sum, r) => sum + r.ms, 0))}  (${rest.length} more files)`);
  }
  return lines.join('\n');
}

export default class SummaryReporter implements Reporter {
  private startedAt = Date.now();
  private readonly lastEnd = new Map<string, number>();

  onTestRunStart(): void {
    this.startedAt = Date.now();
    this.lastEnd.clear();
  }

  onTestModuleEnd(module: TestModule): void {
    this.lastEnd.set(module.project.name, Date.now());
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      // A file that failed outside its tests (import, beforeAll, afterAll) counts once: its tests
      // may all read as skipped or passed, and the run still fails.
      if (module.state() === 'failed' && failedHere === 0) failedHere = 1;
      failed += failedHere;
    }
    const walls = new Map([...this.lastEnd].map(([project, end]) => [project, end - this.startedAt]));
    if (testModules.length > 0) process.stdout.write(`\n${timeTable(testModules, walls)}\n`);
    const timesFile = process.env['CONVOY_TEST_TIMES'];
    if (timesFile !== undefined && timesFile !== '') {
      const files = new Map<string, number>();
      for (const module of testModules)
        files.set(module.project.name, (files.get(module.project.name) ?? 0) + 1);
      const lines = [...walls].map(
        ([project, ms]) => `project\t${project}\t${Math.round(ms / 1000)}\t${files.get(project) ?? 0}`,
      );
      appendFileSync(timesFile, [...lines, `counts\t${passed}\t${failed}\t${skipped}`].join('\n') + '\n');
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
