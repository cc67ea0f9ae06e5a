/**
 * Bare git repositories for tests, made with the git CLI under a project root that
 * `startGitHttpServer({projectRoot})` serves: repository `name` lives in `<root>/<name>.git` and is
 * served as `<server.url>/<name>.git`.
 *
 * Commits are written with `git fast-import` (one process per commit, no work tree) with a fixed
 * author, committer and date, so the same files, parent and message give the same commit id.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** File content, a symlink (`{symlink: target}`), or null to delete the path. */
export type FixtureFile = string | { symlink: string } | { content: string; executable: true } | null;
export type FixtureFiles = Record<string, FixtureFile>;

export type FixtureTag = string | { name: string; annotated: true; message?: string };

export interface CommitOptions {
  branch?: string;
  message?: string;
  tag?: FixtureTag;
  /** Parent commit for a new branch; default the current tip of `branch`, else of HEAD's branch. */
  from?: string;
  /** Unix seconds for author and committer date; default 2026-01-01T00:00:00Z. */
  date?: number;
}

export const FIXTURE_DATE = 1_767_225_600;

const gitEnv = (date: number): NodeJS.ProcessEnv => ({
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'convoy-test',
  GIT_AUTHOR_EMAIL: 'test@convoy.invalid',
  GIT_AUTHOR_DATE: `${date} +0000`,
  GIT_COMMITTER_NAME: 'convoy-test',
  GIT_COMMITTER_EMAIL: 'test@convoy.invalid',
  GIT_COMMITTER_DATE: `${date} +0000`,
});

export function repoDir(root: string, name: string): string {
  return join(root, name.endsWith('.git') ? name : `${name}.git`);
}

async function git(gitDir: string, args: string[], date = FIXTURE_DATE): Promise<string> {
  const { stdout } = await execFileAsync('git', [`--git-dir=${gitDir}`, ...args], { env: gitEnv(date) });
  return stdout.trim();
}

async function revParse(gitDir: string, ref: string): Promise<string | undefined> {
  try {
    return await git(gitDir, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    return undefined;
  }
}

function runFastImport(gitDir: string, stream: Buffer, date: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', [`--git-dir=${gitDir}`, 'fast-import', '--quiet', '--done', '--force'], {
      env: gitEnv(date),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`git fast-import in ${gitDir} failed (${code}): ${stderr}`)),
    );
    child.stdin.end(stream);
  });
}

function data(content: string): string {
  return `data ${Buffer.byteLength(content)}\n${content}\n`;
}

/** Adds a commit with `files` (on top of the branch's tree) to the bare repository `name`. */
export async function commitFiles(
  root: string,
  name: string,
  files: FixtureFiles,
  options: CommitOptions = {},
): Promise<{ commit: string }> {
  const gitDir = repoDir(root, name);
  const branch = options.branch ?? (await git(gitDir, ['symbolic-ref', '--short', 'HEAD']));
  const date = options.date ?? FIXTURE_DATE;
  const message = options.message ?? `update ${Object.keys(files).join(', ')}`;
  const parent =
    options.from ?? (await revParse(gitDir, `refs/heads/${branch}`)) ?? (await revParse(gitDir, 'HEAD'));

  let stream = `commit refs/heads/${branch}\n`;
  stream += `author convoy-test <test@convoy.invalid> ${date} +0000\n`;
  stream += `committer convoy-test <test@convoy.invalid> ${date} +0000\n`;
  stream += data(message);
  if (parent) stream += `from ${parent}\n`;
  for (const [path, file] of Object.entries(files)) {
    if (file === null) stream += `D ${path}\n`;
    else if (typeof file === 'string') stream += `M 100644 inline ${path}\n${data(file)}`;
    else if ('symlink' in file) stream += `M 120000 inline ${path}\n${data(file.symlink)}`;
    else stream += `M 100755 inline ${path}\n${data(file.content)}`;
  }
  stream += '\ndone\n';
  await runFastImport(gitDir, Buffer.from(stream, 'utf8'), date);

  const commit = await git(gitDir, ['rev-parse', `refs/heads/${branch}`]);
  if (options.tag !== undefined) {
    if (typeof options.tag === 'string') {
      await git(gitDir, ['tag', '-f', options.tag, commit], date);
    } else {
      await git(
        gitDir,
        ['tag', '-f', '-a', '-m', options.tag.message ?? options.tag.name, options.tag.name, commit],
        date,
      );
    }
  }
  return { commit };
}

/** Creates the bare repository `<root>/<name>.git` with one commit of `files` on `branch`. */
export async function createRepo(
  root: string,
  name: string,
  files: FixtureFiles,
  options: { branch?: string; tag?: FixtureTag; message?: string; date?: number } = {},
): Promise<{ commit: string }> {
  const branch = options.branch ?? 'main';
  const gitDir = repoDir(root, name);
  await mkdir(root, { recursive: true });
  await execFileAsync('git', ['init', '--quiet', '--bare', `--initial-branch=${branch}`, gitDir], {
    env: gitEnv(FIXTURE_DATE),
  });
  return commitFiles(root, name, files, {
    branch,
    message: options.message ?? 'initial commit',
    ...(options.tag !== undefined ? { tag: options.tag } : {}),
    ...(options.date !== undefined ? { date: options.date } : {}),
  });
}

/** Sets a config value in the bare repository (e.g. `uploadpack.allowReachableSHA1InWant`). */
export async function setRepoConfig(root: string, name: string, key: string, value: string): Promise<void> {
  await git(repoDir(root, name), ['config', key, value]);
}
