// Turns each folder of examples/repos into a bare Git repository with one
// commit, so `convoy dev` can serve them over smart HTTP.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ownedTempPrefix } from './stale-dirs.ts';

const run = promisify(execFile);
const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 'convoy',
  GIT_AUTHOR_EMAIL: 'dev@convoy.invalid',
  GIT_COMMITTER_NAME: 'convoy',
  GIT_COMMITTER_EMAIL: 'dev@convoy.invalid',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

/** Creates `<root>/<name>.git` for every folder in `examplesDir`; returns the root. */
export async function buildExampleRepos(
  examplesDir: string,
): Promise<{ root: string; names: string[]; remove(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), ownedTempPrefix('convoy-examples-')));
  const names: string[] = [];
  for (const entry of await readdir(examplesDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const work = join(examplesDir, entry.name);
    const bare = join(root, `${entry.name}.git`);
    await run('git', ['init', '--quiet', '--bare', '--initial-branch=main', bare], { env });
    const git = (...args: string[]) => run('git', ['--git-dir', bare, '--work-tree', work, ...args], { env });
    await git('add', '--all', '.');
    await git('commit', '--quiet', '-m', `example ${entry.name}`);
    names.push(entry.name);
  }
  return { root, names, remove: () => rm(root, { recursive: true, force: true }) };
}
