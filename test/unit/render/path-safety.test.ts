// The render sandbox's pure rules (domain/render/path-safety.ts, kustomize-refs.ts, tar-entries.ts):
// what a symbolic link, a file, an archive entry or a Kustomize base may name.
import { describe, expect, it } from 'vitest';
import {
  archiveEntryProblem,
  entryProblem,
  isWithin,
  linkTargetProblem,
  parentOf,
  refusalMessage,
  relativePathProblem,
  resolveInside,
} from '../../../domain/render/path-safety.ts';
import {
  classifyKustomizeReference,
  kustomizationReferences,
} from '../../../domain/render/kustomize-refs.ts';
import { readTarEntries, TarFormatError } from '../../../domain/render/tar-entries.ts';
import { tarBytes } from './tar-fixture.ts';

describe('resolveInside: lexical resolution against the checkout root', () => {
  it.each([
    ['', 'a', 'a'],
    ['', './a/./b/', 'a/b'],
    ['chart/templates', '../values.yaml', 'chart/values.yaml'],
    ['chart/charts', '../../library/common', 'library/common'],
    ['a/b', '../..', ''],
    ['a', 'b/../../c', 'c'],
  ])('from %j, %j → %j', (from, target, expected) => {
    expect(resolveInside(from, target)).toBe(expected);
  });

  it.each([
    ['', '..'],
    ['', '../x'],
    ['a/b', '../../../etc/passwd'],
    ['a', 'b/../../../c'],
    ['chart', '../../chart/x'],
  ])('from %j, %j climbs out of the root', (from, target) => {
    expect(resolveInside(from, target)).toBeUndefined();
  });

  it('parentOf', () => {
    expect(parentOf('kubeconfig.txt')).toBe('');
    expect(parentOf('chart/templates/cm.yaml')).toBe('chart/templates');
  });
});

describe('linkTargetProblem: a symbolic link must be relative and stay in the checkout', () => {
  it.each([
    ['templates/cm.yaml', '../files/cm.yaml'],
    ['chart/charts/common', '../../library/common'],
    ['kubeconfig.txt', 'secrets/../kubeconfig-example.txt'],
    ['a/b/c', '../../d'],
  ])('%s -> %s is allowed', (link, target) => {
    expect(linkTargetProblem(link, target)).toBeUndefined();
  });

  it.each([
    ['kubeconfig.txt', '/root/.kube/config', 'is a symbolic link to an absolute path'],
    ['chart/x', '/proc/self/cwd/chart/values.yaml', 'is a symbolic link to an absolute path'],
    [
      'kubeconfig.txt',
      '../../../../../../etc/kubernetes/admin.conf',
      'leads outside the repository checkout',
    ],
    ['a/b', '../../x', 'leads outside the repository checkout'],
    // Leaves and comes back: still refused (the folder above the checkout is not the tenant's).
    ['x', '../checkout/x', 'leads outside the repository checkout'],
    ['empty', '', 'with an empty target'],
    ['nul', 'a\0b', 'NUL'],
  ])('%s -> %j is refused (%s)', (link, target, why) => {
    expect(linkTargetProblem(link, target)).toContain(why);
  });
});

describe('entryProblem: regular files with one name, folders; nothing else', () => {
  it('a file with one name and a folder are fine', () => {
    expect(entryProblem({ kind: 'file', nlink: 1 })).toBeUndefined();
    expect(entryProblem({ kind: 'directory', nlink: 7 })).toBeUndefined();
  });
  it('a hard link (a file with two names) is refused', () => {
    expect(entryProblem({ kind: 'file', nlink: 2 })).toMatch(/^is a hard link \(a file with 2 names/);
  });
  it('a device, FIFO or socket is refused', () => {
    expect(entryProblem({ kind: 'other', nlink: 1 })).toMatch(/device, FIFO or socket/);
  });
});

describe('relativePathProblem: paths the content names', () => {
  it.each(['values.yaml', 'a/b/c.yaml', './x', 'a/./b'])('%j is fine', (path) => {
    expect(relativePathProblem(path)).toBeUndefined();
  });
  it.each([
    ['/etc/passwd', 'absolute'],
    ['\\windows\\x', 'absolute'],
    ['C:/x', 'absolute'],
    ['../x', '".."'],
    ['a/../../x', '".."'],
    ['a\\..\\x', '".."'],
    ['', 'empty'],
    ['.', 'empty'],
    ['a\0b', 'NUL'],
  ])('%j is refused (%s)', (path, why) => {
    expect(relativePathProblem(path)).toContain(why);
  });
});

describe('archiveEntryProblem: entries of a vendored chart archive', () => {
  it('files and folders with relative names are fine', () => {
    expect(archiveEntryProblem({ name: 'sub/Chart.yaml', type: 'file' })).toBeUndefined();
    expect(archiveEntryProblem({ name: 'sub/templates/', type: 'directory' })).toBeUndefined();
  });
  it.each([
    [{ name: 'sub/k.txt', type: 'symlink' as const }, 'symbolic link'],
    [{ name: 'sub/k.txt', type: 'hardlink' as const }, 'hard link'],
    [{ name: 'sub/fifo', type: 'other' as const }, 'not a regular file'],
    [{ name: '/etc/passwd', type: 'file' as const }, 'absolute'],
    [{ name: 'sub/../../x', type: 'file' as const }, '".."'],
    [{ name: 'sub\\..\\..\\x', type: 'file' as const }, '".."'],
  ])('%j is refused (%s)', (entry, why) => {
    expect(archiveEntryProblem(entry)).toContain(why);
  });
});

describe('isWithin', () => {
  it('a path is within its root or below, never beside it', () => {
    expect(isWithin('/tmp/checkout', '/tmp/checkout')).toBe(true);
    expect(isWithin('/tmp/checkout', '/tmp/checkout/a/b')).toBe(true);
    expect(isWithin('/tmp/checkout/', '/tmp/checkout/a')).toBe(true);
    expect(isWithin('/tmp/checkout', '/tmp/checkout-other/a')).toBe(false);
    expect(isWithin('/tmp/checkout', '/tmp')).toBe(false);
    expect(isWithin('/', '/anything')).toBe(true);
  });
});

describe('refusalMessage', () => {
  it('names the file and why, and says what to do', () => {
    expect(refusalMessage({ file: 'kubeconfig.txt', why: 'is a symbolic link to an absolute path' })).toBe(
      'kubeconfig.txt: is a symbolic link to an absolute path; convoy renders only files inside the repository ' +
        'checkout (copy the file into the repository instead of linking to it)',
    );
  });
});

describe('kustomizationReferences and classifyKustomizeReference', () => {
  it('collects resources, bases, components, generators, transformers and validators, with case-insensitive names', () => {
    const refs = kustomizationReferences({
      resources: ['deployment.yaml', '../base'],
      bases: ['../old-base'],
      Components: ['../components/x'],
      reſources: ['../../sneaky'],
      transformers: ['../transformers'],
      generators: [{ inline: true }],
      patches: [{ path: 'p.yaml' }],
      namespace: 'prod',
    });
    expect(refs).toEqual([
      { field: 'resources', value: 'deployment.yaml' },
      { field: 'resources', value: '../base' },
      { field: 'bases', value: '../old-base' },
      { field: 'Components', value: '../components/x' },
      { field: 'reſources', value: '../../sneaky' },
      { field: 'transformers', value: '../transformers' },
    ]);
    expect(kustomizationReferences(null)).toEqual([]);
    expect(kustomizationReferences(['resources'])).toEqual([]);
  });

  it.each([
    ['overlays/prod', '../../base', { kind: 'local', path: 'base' }],
    ['app', 'deployment.yaml', { kind: 'local', path: 'app/deployment.yaml' }],
    ['app', './github.com/org/repo', { kind: 'local', path: 'app/github.com/org/repo' }],
    ['app', 'owner@example.yaml', { kind: 'local', path: 'app/owner@example.yaml' }],
  ])('from %j, %j → %j', (from, value, verdict) => {
    expect(classifyKustomizeReference(from, value)).toEqual(verdict);
  });

  it.each([
    ['app', '../../etc', 'leads outside'],
    ['app', '/etc/kubernetes', 'absolute'],
    ['app', 'file:///var/lib/repo', 'file://'],
    ['app', 'git::file:///var/lib/repo', 'file://'],
    ['app', 'FILE:///x', 'file://'],
    ['app', 'a\0b', 'NUL'],
    // Remote: kustomize would fetch it itself, outside the egress policy.
    ['app', 'https://github.com/org/repo//deploy?ref=v1', 'remote location'],
    ['app', 'http://169.254.169.254/latest/meta-data', 'remote location'],
    ['app', 'HTTP://127.0.0.1:8080/x.yaml', 'remote location'],
    ['app', 'https://x/../../../../etc', 'remote location'],
    ['app', 'github.com/org/repo/deploy', 'remote location'],
    ['app', 'GitHub.com/org/repo', 'remote location'],
    ['app', 'git@github.com:org/repo.git', 'remote location'],
    ['app', 'foo@127.0.0.1/org/repo', 'remote location'],
    ['app', 'ssh://git@10.0.0.1/repo', 'remote location'],
    ['app', 'git::https://10.0.0.1/repo', 'remote location'],
    ['app', 'gh:org/repo', 'remote location'],
  ])('from %j, %j is refused (%s)', (from, value, why) => {
    const verdict = classifyKustomizeReference(from, value);
    expect(verdict.kind).toBe('refused');
    expect(verdict.kind === 'refused' ? verdict.why : '').toContain(why);
  });
});

describe('readTarEntries', () => {
  it('lists names and types, with pax and ustar names, and file bytes', () => {
    const long = `sub/${'d'.repeat(120)}/values.yaml`;
    const entries = readTarEntries(
      tarBytes([
        { name: 'sub/', type: 'directory' },
        { name: 'sub/Chart.yaml', content: 'name: sub\n' },
        { name: 'sub/k.txt', type: 'symlink', linkName: '/etc/passwd' },
        { name: 'sub/h.txt', type: 'hardlink', linkName: 'sub/Chart.yaml' },
        { name: 'sub/fifo', type: 'fifo' },
        { name: long, pax: true, content: 'a: 1\n' },
      ]),
    );
    expect(entries.map(({ name, type }) => ({ name, type }))).toEqual([
      { name: 'sub/', type: 'directory' },
      { name: 'sub/Chart.yaml', type: 'file' },
      { name: 'sub/k.txt', type: 'symlink' },
      { name: 'sub/h.txt', type: 'hardlink' },
      { name: 'sub/fifo', type: 'other' },
      { name: long, type: 'file' },
    ]);
    expect(Buffer.from(entries[1].data).toString()).toBe('name: sub\n');
    expect(Buffer.from(entries[5].data).toString()).toBe('a: 1\n');
  });

  it('a truncated archive or a bad size field is a TarFormatError', () => {
    const bytes = tarBytes([{ name: 'a', content: 'x'.repeat(2000) }]);
    expect(() => readTarEntries(bytes.subarray(0, 1024))).toThrow(TarFormatError);
    const bad = Buffer.from(bytes);
    bad.write('zzzzzzzzzzz', 124);
    expect(() => readTarEntries(bad)).toThrow(TarFormatError);
  });

  it('an empty archive has no entries', () => {
    expect(readTarEntries(tarBytes([]))).toEqual([]);
    expect(readTarEntries(new Uint8Array())).toEqual([]);
  });
});
