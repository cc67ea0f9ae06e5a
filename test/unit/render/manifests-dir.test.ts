import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderManifestsDir } from '../../../adapters/render/manifests.ts';
import { RenderError } from '../../../domain/render/errors.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'convoy-manifests-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(path: string, text: string): Promise<void> {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), text);
}
const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;

describe('renderManifestsDir', () => {
  it('reads *.yaml, *.yml and *.json recursively in path order', async () => {
    await put('b.yaml', `${cm('b1')}---\n${cm('b2')}`);
    await put('a/z.yml', cm('az'));
    await put(
      'a/a.json',
      JSON.stringify([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'aa' } }]),
    );
    await put('README.md', '# not a manifest');
    await put('c.txt', 'nope');
    const objects = await renderManifestsDir(root);
    expect(objects.map((o) => o.metadata.name)).toEqual(['aa', 'az', 'b1', 'b2']);
  });

  it('skips hidden folders and files', async () => {
    await put('.git/config.yaml', 'not: kubernetes');
    await put('.github/workflows/ci.yml', 'on: push');
    await put('.gitlab-ci.yml', 'stages: []');
    await put('app.yaml', cm('app'));
    expect((await renderManifestsDir(root)).map((o) => o.metadata.name)).toEqual(['app']);
  });

  it('names the file and document of a bad document', async () => {
    await put('ok.yaml', cm('ok'));
    await put('sub/bad.yaml', `${cm('fine')}---\napiVersion: v1\nmetadata: {name: x}\n`);
    const rejection = expect(renderManifestsDir(root)).rejects;
    await rejection.toBeInstanceOf(RenderError);
    await rejection.toThrow('sub/bad.yaml: document 2 (line 5): missing kind');
    await rejection.toMatchObject({ file: 'sub/bad.yaml', docIndex: 1, line: 5 });
  });

  it('names both files of a duplicate object', async () => {
    await put('one.yaml', cm('same'));
    await put('two/again.yaml', `${cm('other')}---\n${cm('same')}`);
    await expect(renderManifestsDir(root)).rejects.toThrow(
      /ConfigMap same appears twice in the render \(one\.yaml, object 1 and two\/again\.yaml, object 2\)/,
    );
  });

  it('follows symbolic links inside the folder', async () => {
    // Hidden, so reachable only through the links.
    await put('.shared/app.yaml', cm('app'));
    await put('.other/db.yaml', cm('db'));
    await symlink(join(root, '.shared'), join(root, 'linked'));
    await symlink(join('.other', 'db.yaml'), join(root, 'db-link.yaml'));
    const objects = await renderManifestsDir(root);
    expect(objects.map((o) => o.metadata.name)).toEqual(['db', 'app']);
  });

  it('refuses a symbolic link that leads outside the folder', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'convoy-outside-'));
    try {
      await writeFile(join(outside, 'secret.yaml'), cm('stolen'));
      await put('app.yaml', cm('app'));
      await symlink(join(outside, 'secret.yaml'), join(root, 'escape.yaml'));
      await expect(renderManifestsDir(root)).rejects.toThrow(
        /^escape\.yaml: the symbolic link leads outside the rendered folder/,
      );
      await rm(join(root, 'escape.yaml'));
      await symlink(outside, join(root, 'escape-dir'));
      await expect(renderManifestsDir(root)).rejects.toThrow(/^escape-dir: the symbolic link leads outside/);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('ignores links outside the folder that are not manifests, and link loops', async () => {
    await put('app.yaml', cm('app'));
    await symlink('/etc/hostname', join(root, 'notes.txt'));
    await symlink(root, join(root, 'sub-loop'));
    await expect(renderManifestsDir(root)).resolves.toHaveLength(1);
  });

  it('refuses a file over 10 MiB before reading it', async () => {
    await put('huge.yaml', `${cm('big')}x: "${'x'.repeat(10 * 1024 * 1024)}"\n`);
    await expect(renderManifestsDir(root)).rejects.toThrow(
      'huge.yaml: the file is larger than 10 MiB; split it into smaller files',
    );
  });

  it('an empty folder renders nothing', async () => {
    await expect(renderManifestsDir(root)).resolves.toEqual([]);
  });
});
