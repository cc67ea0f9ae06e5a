// functions: each Lambda entry point bundled with esbuild (scripts/bundle-functions.ts),
// its size, and the time to import it in a fresh Node process (a cold start's module load).
// Targets: bundle < 2 MB, import < 250 ms.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bundleFunctions, type BundleResult } from '../../scripts/bundle-functions.ts';
import { median, ms } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';

const execFileAsync = promisify(execFile);

/** 2 MiB. */
const MAX_BYTES = 2 * 1024 * 1024;
const MAX_IMPORT_MS = 250;
const IMPORTS = 5;

export class ImportTimingError extends Error {
  override name = 'ImportTimingError';
}

export interface ColdImport {
  /** Median wall time of the import() — the target's measure. */
  medianMs: number;
  runsMs: number[];
  /**
   * Median CPU time (user + system, all threads of the process) spent during the import():
   * much less sensitive than wall time to other processes competing for the CPUs.
   */
  medianCpuMs: number;
}

/** Median of `runs` cold imports, each in a fresh `node` process, timed inside it around import(). */
export async function coldImport(root: string, file: string, runs = IMPORTS): Promise<ColdImport> {
  const url = new URL(`file://${join(root, file)}`).href;
  const code = [
    'const c = process.cpuUsage();',
    'const t = performance.now();',
    `await import(${JSON.stringify(url)});`,
    'const wall = performance.now() - t;',
    'const cpu = process.cpuUsage(c);',
    'console.log(JSON.stringify({ wall, cpu: (cpu.user + cpu.system) / 1000 }));',
  ].join(' ');
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const { stdout } = await execFileAsync(process.execPath, ['--input-type=module', '-e', code], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '' },
    });
    let parsed: { wall?: unknown; cpu?: unknown } = {};
    try {
      parsed = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as typeof parsed;
    } catch {
      // reported below
    }
    if (typeof parsed.wall !== 'number' || typeof parsed.cpu !== 'number') {
      throw new ImportTimingError(`importing ${file} printed ${JSON.stringify(stdout)}, not {wall, cpu}`);
    }
    wall.push(ms(parsed.wall));
    cpu.push(ms(parsed.cpu));
  }
  return { medianMs: median(wall) ?? Number.NaN, runsMs: wall, medianCpuMs: median(cpu) ?? Number.NaN };
}

export async function benchFunctions(root: string): Promise<Record<string, unknown>> {
  log('functions: bundling (AWS SDK external, as shipped)');
  const shipped = await bundleFunctions({ root });
  log('functions: bundling (AWS SDK bundled, for comparison)');
  const full = await bundleFunctions({
    root,
    awsSdk: 'bundled',
    outDir: join('dist', 'functions-aws-sdk-bundled'),
  });

  const measure = async (bundles: BundleResult[]) => {
    const out: Record<string, unknown>[] = [];
    for (const b of bundles) {
      log(`functions: cold import of ${b.out}`);
      const imported = await coldImport(root, b.out);
      out.push({
        ...b,
        importMedianMs: imported.medianMs,
        importRunsMs: imported.runsMs,
        importMedianCpuMs: imported.medianCpuMs,
      });
    }
    return out;
  };
  const shippedMeasured = await measure(shipped);
  const fullMeasured = await measure(full);

  const perFunction = shippedMeasured.map((b) => {
    const bytes = b['bytes'] as number;
    const importMs = b['importMedianMs'] as number;
    return {
      fn: b['fn'] as string,
      bytes,
      importMedianMs: importMs,
      importMedianCpuMs: b['importMedianCpuMs'] as number,
      bytesMet: bytes < MAX_BYTES,
      importMet: importMs < MAX_IMPORT_MS,
    };
  });
  return {
    how: `esbuild: platform node, target node24, ESM, minified, external source map, createRequire banner; import timed inside a fresh node process around import() (wall time, and CPU time for reference), median of ${IMPORTS}`,
    targets: { maxBytes: MAX_BYTES, maxBytesNote: '2 MiB', maxImportMs: MAX_IMPORT_MS },
    met: perFunction.every((f) => f.bytesMet && f.importMet),
    shipped: {
      awsSdk: 'external (provided by the nodejs24.x runtime; resolved from node_modules here)',
      perFunction,
      bundles: shippedMeasured,
    },
    awsSdkBundled: { bundles: fullMeasured },
  };
}
