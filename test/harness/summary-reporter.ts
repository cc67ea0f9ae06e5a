// Ends a test run with a per-file time table, so the slowest files are visible in CI's log, and
// then ONE plain closing line, "N passed, N failed, N skipped", that any CI can read (keep it last).
//
//   test files by wall time (import, setup and tests; files of one project may run in parallel):
//     integration  412.3 s in 31 files
//        61.2 s  test/integration/queue-e2e.test.ts
//        …       (the 12 slowest of each project, then one line for the rest)
//
//   1216 passed, 0 failed, 0 skipped
import type { Reporter, TestModule } from 'vitest/node';

/** Rows per project; the rest of its files are summed on one line. */
const SLOWEST = 12;

/** A file's own wall time in its worker: environment, harness, import (with suite callbacks), setup files, tests and hooks. */
function fileMs(module: TestModule): number {
  const d = module.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`.padStart(8);

export function timeTable(modules: ReadonlyArray<TestModule>): string {
  const byProject = new Map<string, { file: string; ms: number }[]>();
  for (const module of modules) {
    const rows = byProject.get(module.project.name) ?? [];
    rows.push({ file: module.relativeModuleId, ms: fileMs(module) });
    byProject.set(module.project.name, rows);
  }
  const lines = ['test files by wall time (import, setup and tests; files of one project may run in parallel):'];
  for (const [project, rows] of [...byProject].sort(([a], [b]) => a.localeCompare(b))) {
    rows.sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file));
    const total = rows.reduce((sum, r) => sum + r.ms, 0);
    lines.push(`  ${project || '(no project)'}  ${seconds(total).trim()} in ${rows.length} files`);
    for (const r of rows.slice(0, SLOWEST)) lines.push(`  ${seconds(r.ms)}  ${r.file}`);
    const rest = rows.slice(SLOWEST);
    if (rest.length > 0) lines.push(`  ${seconds(rest.reduce((sum, r) => sum + r.ms, 0))}  (${rest.length} more files)`);
  }
  return lines.join('\n');
}

export default class SummaryReporter implements Reporter {
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
    if (testModules.length > 0) process.stdout.write(`\n${timeTable(testModules)}\n`);
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
