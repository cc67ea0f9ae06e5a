import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToolLocator, ToolNotFoundError } from '../../../adapters/tools/binaries.ts';

const execFileAsync = promisify(execFile);
let work: string;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'convoy-tools-test-'));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

async function fakeTool(path: string): Promise<string> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, '#!/bin/sh\necho fake\n');
  await chmod(path, 0o755);
  return path;
}

describe('tool locator', () => {
  it('CONVOY_HELM / CONVOY_KUBECTL win', async () => {
    const helm = await fakeTool(join(work, 'env', 'helm'));
    const kubectl = await fakeTool(join(work, 'env', 'kubectl'));
    const tools = await createToolLocator({
      env: { CONVOY_HELM: helm, CONVOY_KUBECTL: kubectl },
      optDir: join(work, 'no-opt'),
    }).locate();
    expect(tools).toEqual({ helm, kubectl });
  });

  it('a CONVOY_HELM that is not executable is an error naming the variable', async () => {
    const err = await createToolLocator({ env: { CONVOY_HELM: join(work, 'nothing') } })
      .locate()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolNotFoundError);
    expect((err as Error).message).toContain('CONVOY_HELM');
  });

  it('the Lambda layer mount (/opt/helm/helm, /opt/kubectl/kubectl) comes next', async () => {
    const opt = join(work, 'opt');
    await fakeTool(join(opt, 'helm', 'helm'));
    await fakeTool(join(opt, 'kubectl', 'kubectl'));
    expect(await createToolLocator({ env: {}, optDir: opt }).locate()).toEqual({
      helm: join(opt, 'helm', 'helm'),
      kubectl: join(opt, 'kubectl', 'kubectl'),
    });
  });

  it('otherwise extracts the newest installed kubectl layer once, safely under concurrency', async () => {
    const cacheDir = join(work, 'cache');
    const options = { env: {}, optDir: join(work, 'no-opt'), cacheDir };
    const locator = createToolLocator(options);
    expect(locator.locate()).toBe(locator.locate()); // one instance, one promise
    const [a, b] = await Promise.all([locator.locate(), createToolLocator(options).locate()]);
    expect(a).toEqual(b);
    expect(a.helm).toMatch(/lambda-layer-kubectl-v\d+@[^/]+\/helm\/helm$/);
    const { stdout } = await execFileAsync(a.helm, ['version', '--short']);
    expect(stdout).toMatch(/^v\d+\./);
    const { stdout: kubectl } = await execFileAsync(a.kubectl, ['version', '--client']);
    expect(kubectl).toContain('Client Version');
  }, 60_000);

  it('no tools anywhere → ToolNotFoundError saying what to do', async () => {
    const err = await createToolLocator({
      env: {},
      optDir: join(work, 'no-opt'),
      searchPaths: [join(work, 'none')],
    })
      .locate()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ToolNotFoundError);
    expect((err as Error).message).toContain('CONVOY_HELM');
  });
});
