// A chart archive (.tgz) extracted into the chart cache: into a private work folder first, without
// owners, modes or symlinks, then renamed into the folder named after its digest. Shared by the
// Helm repository (helm-repo.ts) and OCI (oci-helm.ts) chart sources.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SourceNotReadyError, UnsupportedSourceError } from './errors.ts';
import { pathExists } from '../tools/path-exists.ts';

const execFileAsync = promisify(execFile);

/** Throws when the extracted tree holds a symlink (a chart archive has no business with them). */
async function refuseSymlinks(dir: string, what: string, field: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const info = await lstat(path);
    if (info.isSymbolicLink()) {
      throw new UnsupportedSourceError(
        `${field}.chart`,
        `${what} contains a symbolic link (${name}); convoy refuses chart archives with symlinks — repackage the chart with helm package`,
      );
    }
    if (info.isDirectory()) await refuseSymlinks(path, what, field);
  }
}

/** The chart folder inside an extracted archive: `<chart>/` or the single top-level folder. */
export async function findChartDir(extracted: string, chart: string): Promise<string | undefined> {
  if (await pathExists(join(extracted, chart, 'Chart.yaml'))) return chart;
  const names = await readdir(extracted);
  if (names.length === 1 && (await pathExists(join(extracted, names[0], 'Chart.yaml')))) return names[0];
  return undefined;
}

/**
 * Extracts a chart archive (.tgz) into `final` (a cache folder named after its digest) through a
 * private work folder: tar without owners or modes, no symlinks, a Chart.yaml required. Another
 * process extracting the same archive first is fine (theirs is identical). Returns `final`.
 */
export async function storeChartArchive(
  archive: Buffer,
  final: string,
  cacheDir: string,
  where: { chart: string; what: string; field: string; from: string },
): Promise<string> {
  const work = join(cacheDir, `.tmp-${randomBytes(8).toString('hex')}`);
  const extracted = join(work, 'chart');
  try {
    await mkdir(extracted, { recursive: true });
    await writeFile(join(work, 'chart.tgz'), archive);
    try {
      await execFileAsync('tar', [
        '-xzf',
        join(work, 'chart.tgz'),
        '-C',
        extracted,
        '--no-same-owner',
        '--no-same-permissions',
      ]);
    } catch (err) {
      throw new SourceNotReadyError(
        `${where.field}.chart`,
        `${where.what} from ${where.from} is not a valid chart archive (tar failed)`,
        { cause: err },
      );
    }
    await refuseSymlinks(extracted, where.what, where.field);
    if ((await findChartDir(extracted, where.chart)) === undefined) {
      throw new SourceNotReadyError(`${where.field}.chart`, `${where.what} archive holds no Chart.yaml`);
    }
    try {
      await rename(extracted, final);
    } catch (err) {
      // Someone else extracted the same archive first: theirs is identical.
      const code = err instanceof Error && 'code' in err ? String(err.code) : '';
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return final;
}
