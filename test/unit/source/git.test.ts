import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer } from '../../../dev/git-http-server.ts';
import type { GitHttpServer } from '../../../dev/git-http-server.ts';
import {
  SourceNotReadyError,
  SourcePathError,
  UnsupportedSourceError,
} from '../../../adapters/source/errors.ts';
import { fetchGitSource as fetchThrough } from '../../../adapters/source/git.ts';
import type { GitSourceInput, GitSourceOptions } from '../../../adapters/source/git.ts';
import { createEgress, type Egress } from '../../../adapters/egress/client.ts';
import { parseEgressAllow } from '../../../domain/egress/policy.ts';
import { createGitCache } from '../../../adapters/source/git-cache.ts';
import type { GitCache } from '../../../adapters/source/git-cache.ts';
import { commitFiles, createRepo } from '../../harness/git-fixtures.ts';

const PASSWORD = 's3cr3t-pa55word';
const TOKEN = 'tok-0123456789abcdef';

let root: string;
let open: GitHttpServer;
let basic: GitHttpServer;
let bearer: GitHttpServer;
let first: string; // commit 1 of apps (tag v1)
let second: string; // commit 2 of apps = main (annotated tag v2)
let feature: string; // tip of branch feature

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'convoy-git-test-'));
  ({ commit: first } = await createRepo(
    root,
    'apps',
    {
      'apps/podinfo/deployment.yaml': 'kind: Deployment\nversion: 1\n',
      'apps/other/cm.yaml': 'kind: ConfigMap\n',
      'escape-relative': { symlink: '../../../../..' },
      'escape-absolute': { symlink: '/etc' },
      'inside-link': { symlink: 'apps/podinfo' },
    },
    { tag: 'v1' },
  ));
  ({ commit: second } = await commitFiles(
    root,
    'apps',
    { 'apps/podinfo/deployment.yaml': 'kind: Deployment\nversion: 2\n' },
    { message: 'v2', tag: { name: 'v2', annotated: true } },
  ));
  ({ commit: feature } = await commitFiles(
    root,
    'apps',
    { 'apps/podinfo/deployment.yaml': 'kind: Deployment\nversion: feature\n' },
    { branch: 'feature', message: 'feature work' },
  ));
  open = await startGitHttpServer({ projectRoot: root });
  basic = await startGitHttpServer({ projectRoot: root, auth: { username: 'convoy', password: PASSWORD } });
  bearer = await startGitHttpServer({ projectRoot: root, auth: { bearerToken: TOKEN } });
  // Loopback is refused by the egress policy: this file's servers (and the closed port 1 of the
  // unreachable-server row) are allowed, as an installation would list its Git servers.
  const hosts = [open, basic, bearer].map((s) => `127.0.0.1:${s.port}`);
  egress = createEgress({
    allow: parseEgressAllow([...hosts, '127.0.0.1:1'].join(','), 'test'),
    clusterNetworks: [],
  });
});

let egress: Egress;
const fetchGitSource = (input: GitSourceInput, cache: GitCache, options: GitSourceOptions = {}) =>
  fetchThrough(input, cache, { egress, ...options });

afterAll(async () => {
  await Promise.all([open?.stop(), basic?.stop(), bearer?.stop()]);
  await rm(root, { recursive: true, force: true });
});

async function newCache(maxEntries = 8): Promise<GitCache> {
  return createGitCache({ dir: await mkdtemp(join(root, 'cache-')), maxEntries });
}

function input(server: GitHttpServer, rest: Partial<GitSourceInput> = {}): GitSourceInput {
  return { url: `${server.url}/apps.git`, ref: { branch: 'main' }, path: 'apps/podinfo', ...rest };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`rejected with a non-Error: ${String(err)}`);
  }
  throw new Error('expected a rejection');
}

function packFetches(server: GitHttpServer, since: number): number {
  return server.requests.slice(since).filter((r) => r.command === 'fetch').length;
}

describe('git source: refs', () => {
  it('branch: checks out the tip of the branch and returns path inside it', async () => {
    const cache = await newCache();
    const result = await fetchGitSource(input(open), cache);
    expect(result.resolved).toEqual({ url: `${open.url}/apps.git`, ref: { branch: 'main' }, commit: second });
    expect(result.dir).toBe(join(result.root, 'apps', 'podinfo'));
    expect(await readFile(join(result.dir, 'deployment.yaml'), 'utf8')).toContain('version: 2');
    expect(existsSync(join(result.root, '.git'))).toBe(false);
    expect(result.cacheHit).toBe(false);
  });

  it('branch other than the default: checks out that branch', async () => {
    const result = await fetchGitSource(input(open, { ref: { branch: 'feature' } }), await newCache());
    expect(result.resolved.commit).toBe(feature);
    expect(await readFile(join(result.dir, 'deployment.yaml'), 'utf8')).toContain('version: feature');
  });

  it('lightweight tag: checks out the tagged commit', async () => {
    const result = await fetchGitSource(input(open, { ref: { tag: 'v1' } }), await newCache());
    expect(result.resolved).toMatchObject({ ref: { tag: 'v1' }, commit: first });
    expect(await readFile(join(result.dir, 'deployment.yaml'), 'utf8')).toContain('version: 1');
  });

  it('annotated tag: resolves to the commit the tag points to', async () => {
    const result = await fetchGitSource(input(open, { ref: { tag: 'v2' } }), await newCache());
    expect(result.resolved).toMatchObject({ ref: { tag: 'v2' }, commit: second });
  });

  it('commit: checks out exactly that commit, not a branch tip', async () => {
    const result = await fetchGitSource(input(open, { ref: { commit: first } }), await newCache());
    expect(result.resolved).toMatchObject({ ref: { commit: first }, commit: first });
    expect(await readFile(join(result.dir, 'deployment.yaml'), 'utf8')).toContain('version: 1');
  });

  it('path defaults to the repository root', async () => {
    const result = await fetchGitSource(input(open, { path: undefined }), await newCache());
    expect(result.dir).toBe(result.root);
    expect(existsSync(join(result.dir, 'apps', 'other', 'cm.yaml'))).toBe(true);
  });

  it('path through a symlink that stays inside the checkout is allowed', async () => {
    const result = await fetchGitSource(input(open, { path: 'inside-link' }), await newCache());
    expect(result.dir).toBe(join(result.root, 'apps', 'podinfo'));
  });
});

describe('git source: cache', () => {
  it('second fetch of the same branch commit hits the cache: ref listing only, no pack fetch', async () => {
    const cache = await newCache();
    const before = open.requests.length;
    const miss = await fetchGitSource(input(open), cache);
    expect(packFetches(open, before)).toBe(1);

    const afterMiss = open.requests.length;
    const hit = await fetchGitSource(input(open), cache);
    expect(hit.cacheHit).toBe(true);
    expect(hit.root).toBe(miss.root);
    expect(packFetches(open, afterMiss)).toBe(0);
    expect(open.requests.slice(afterMiss).map((r) => r.command)).toEqual(['advertise', 'ls-refs']);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1, entries: 1 });
  });

  it('second fetch of the same commit ref hits the cache without any request', async () => {
    const cache = await newCache();
    await fetchGitSource(input(open, { ref: { commit: first } }), cache);
    const before = open.requests.length;
    const hit = await fetchGitSource(input(open, { ref: { commit: first } }), cache);
    expect(hit.cacheHit).toBe(true);
    expect(open.requests.length).toBe(before);
  });

  it('a tag and a branch on the same commit share one cache entry', async () => {
    const cache = await newCache();
    await fetchGitSource(input(open, { ref: { branch: 'main' } }), cache);
    const viaTag = await fetchGitSource(input(open, { ref: { tag: 'v2' } }), cache);
    expect(viaTag.cacheHit).toBe(true);
    expect(cache.stats().entries).toBe(1);
  });

  it('concurrent fetches of the same commit share one fetch', async () => {
    const cache = await newCache();
    const before = open.requests.length;
    const results = await Promise.all(
      [1, 2, 3].map(() => fetchGitSource(input(open, { ref: { commit: first } }), cache)),
    );
    expect(new Set(results.map((r) => r.root)).size).toBe(1);
    expect(packFetches(open, before)).toBe(1);
  });

  it('evicts the least recently used checkout beyond maxEntries', async () => {
    const cache = await newCache(2);
    const a = await fetchGitSource(input(open, { ref: { commit: first } }), cache);
    const b = await fetchGitSource(input(open, { ref: { commit: second } }), cache);
    await fetchGitSource(input(open, { ref: { commit: first } }), cache); // a is now the most recent
    const c = await fetchGitSource(input(open, { ref: { commit: feature } }), cache);
    expect(existsSync(a.root)).toBe(true);
    expect(existsSync(b.root)).toBe(false);
    expect(existsSync(c.root)).toBe(true);
    expect(cache.stats()).toMatchObject({ entries: 2, evictions: 1 });
  });

  it('a new cache instance on the same directory adopts the existing checkouts', async () => {
    const dir = await mkdtemp(join(root, 'cache-'));
    await fetchGitSource(input(open, { ref: { commit: first } }), createGitCache({ dir, maxEntries: 4 }));
    const before = open.requests.length;
    const again = await fetchGitSource(
      input(open, { ref: { commit: first } }),
      createGitCache({ dir, maxEntries: 4 }),
    );
    expect(again.cacheHit).toBe(true);
    expect(open.requests.length).toBe(before);
  });
});

describe('git source: authentication', () => {
  it('basic auth (username+password) is accepted', async () => {
    const result = await fetchGitSource(
      input(basic, { auth: { username: 'convoy', password: PASSWORD } }),
      await newCache(),
    );
    expect(result.resolved.commit).toBe(second);
  });

  it('bearer token is accepted', async () => {
    const result = await fetchGitSource(input(bearer, { auth: { bearerToken: TOKEN } }), await newCache());
    expect(result.resolved.commit).toBe(second);
  });

  it('missing credentials → SourceNotReadyError naming the secretRef', async () => {
    const err = await rejection(fetchGitSource(input(basic), await newCache()));
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect((err as SourceNotReadyError).field).toBe('spec.source.git.secretRef');
    expect(err.message).toContain('401');
  });

  it('wrong password → SourceNotReadyError whose message has no password', async () => {
    const wrong = 'wr0ng-pa55word';
    const err = await rejection(
      fetchGitSource(input(basic, { auth: { username: 'convoy', password: wrong } }), await newCache()),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect(err.message).not.toContain(wrong);
    expect(err.message).not.toContain(PASSWORD);
    expect(err.message).toContain(`${basic.url}/apps.git`);
    expect(err.message).toContain('branch "main"');
  });

  it('wrong password for a commit ref → SourceNotReadyError (no fallback full fetch)', async () => {
    const err = await rejection(
      fetchGitSource(
        input(basic, { ref: { commit: first }, auth: { username: 'convoy', password: 'nope-nope' } }),
        await newCache(),
      ),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect(err.message).not.toContain('nope-nope');
  });

  it('wrong bearer token → SourceNotReadyError whose message has no token', async () => {
    const wrong = 'tok-wrong-0000000';
    const err = await rejection(
      fetchGitSource(input(bearer, { auth: { bearerToken: wrong } }), await newCache()),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect(err.message).not.toContain(wrong);
    expect(err.message).not.toContain(TOKEN);
  });

  it('credentials embedded in the URL are used but never reported', async () => {
    const url = `http://convoy:${PASSWORD}@127.0.0.1:${basic.port}/apps.git`;
    const result = await fetchGitSource(input(basic, { url }), await newCache());
    expect(result.resolved.url).toBe(`${basic.url}/apps.git`);
    const err = await rejection(
      fetchGitSource(input(basic, { url, ref: { branch: 'nope' } }), await newCache()),
    );
    expect(err.message).not.toContain(PASSWORD);
  });
});

describe('git source: unsupported specs (terminal)', () => {
  it('semver ref → UnsupportedSourceError naming spec.source.git.ref.semver', async () => {
    const err = await rejection(
      fetchGitSource(input(open, { ref: { semver: '>=1.0.0' } }), await newCache()),
    );
    expect(err).toBeInstanceOf(UnsupportedSourceError);
    expect((err as UnsupportedSourceError).field).toBe('spec.source.git.ref.semver');
    expect(err.message).toContain('spec.source.git.ref.semver');
  });

  it('ssh:// URL → UnsupportedSourceError', async () => {
    const err = await rejection(
      fetchGitSource(input(open, { url: 'ssh://git@git.example.com/org/apps.git' }), await newCache()),
    );
    expect(err).toBeInstanceOf(UnsupportedSourceError);
    expect((err as UnsupportedSourceError).field).toBe('spec.source.git.url');
  });

  it('scp-like git@host:path URL → UnsupportedSourceError', async () => {
    const err = await rejection(
      fetchGitSource(input(open, { url: 'git@github.com:org/apps.git' }), await newCache()),
    );
    expect(err).toBeInstanceOf(UnsupportedSourceError);
    expect(err.message).toContain('https://');
  });

  it('more than one ref kind → UnsupportedSourceError naming spec.source.git.ref', async () => {
    const err = await rejection(
      fetchGitSource(input(open, { ref: { branch: 'main', tag: 'v1' } }), await newCache()),
    );
    expect(err).toBeInstanceOf(UnsupportedSourceError);
    expect((err as UnsupportedSourceError).field).toBe('spec.source.git.ref');
  });

  it('abbreviated commit → UnsupportedSourceError naming spec.source.git.ref.commit', async () => {
    const err = await rejection(
      fetchGitSource(input(open, { ref: { commit: first.slice(0, 7) } }), await newCache()),
    );
    expect(err).toBeInstanceOf(UnsupportedSourceError);
    expect((err as UnsupportedSourceError).field).toBe('spec.source.git.ref.commit');
  });
});

describe('git source: not ready (retried)', () => {
  it('unknown branch → SourceNotReadyError naming the branch', async () => {
    const err = await rejection(
      fetchGitSource(input(open, { ref: { branch: 'does-not-exist' } }), await newCache()),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect((err as SourceNotReadyError).field).toBe('spec.source.git.ref.branch');
    expect(err.message).toContain('does-not-exist');
  });

  it('unknown tag → SourceNotReadyError', async () => {
    const err = await rejection(fetchGitSource(input(open, { ref: { tag: 'v9' } }), await newCache()));
    expect(err).toBeInstanceOf(SourceNotReadyError);
  });

  it('commit not in the repository → SourceNotReadyError after the full-depth fallback fetch', async () => {
    const before = open.requests.length;
    const err = await rejection(
      fetchGitSource(input(open, { ref: { commit: 'deadbeef'.repeat(5) } }), await newCache()),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect((err as SourceNotReadyError).field).toBe('spec.source.git.ref.commit');
    expect(err.message).toContain('deadbeef'.repeat(5));
    expect(packFetches(open, before)).toBe(2); // the exact commit, then every branch and tag
  });

  it('commit: fetched directly when the server serves it (one pack fetch, no fallback)', async () => {
    const before = open.requests.length;
    await fetchGitSource(input(open, { ref: { commit: first } }), await newCache());
    expect(packFetches(open, before)).toBe(1);
  });

  it('unknown repository → SourceNotReadyError', async () => {
    const err = await rejection(
      fetchGitSource(input(open, { url: `${open.url}/missing.git` }), await newCache()),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
  });

  it('unreachable server → SourceNotReadyError', async () => {
    const err = await rejection(
      fetchGitSource(input(open, { url: 'http://127.0.0.1:1/apps.git' }), await newCache()),
    );
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect(err.message).toContain('(connection refused)');
  });

  it('path that does not exist at the commit → SourceNotReadyError', async () => {
    const err = await rejection(fetchGitSource(input(open, { path: 'apps/missing' }), await newCache()));
    expect(err).toBeInstanceOf(SourceNotReadyError);
    expect((err as SourceNotReadyError).field).toBe('spec.source.git.path');
  });
});

describe('git source: path traversal is refused (terminal SourcePathError)', () => {
  it.each([['../x'], ['apps/../../x'], ['apps/..']])('relative path with "..": %s', async (path) => {
    const err = await rejection(fetchGitSource(input(open, { path }), await newCache()));
    expect(err).toBeInstanceOf(SourcePathError);
    expect(err).toBeInstanceOf(UnsupportedSourceError);
    expect((err as SourcePathError).field).toBe('spec.source.git.path');
  });

  it('absolute path', async () => {
    const err = await rejection(fetchGitSource(input(open, { path: '/etc' }), await newCache()));
    expect(err).toBeInstanceOf(SourcePathError);
  });

  it('symlink pointing outside the checkout (relative target)', async () => {
    const err = await rejection(fetchGitSource(input(open, { path: 'escape-relative' }), await newCache()));
    expect(err).toBeInstanceOf(SourcePathError);
  });

  it('symlink pointing outside the checkout (absolute target)', async () => {
    const err = await rejection(fetchGitSource(input(open, { path: 'escape-absolute' }), await newCache()));
    expect(err).toBeInstanceOf(SourcePathError);
  });

  it('path refused before any network request', async () => {
    const before = open.requests.length;
    await rejection(fetchGitSource(input(open, { path: '../x' }), await newCache()));
    expect(open.requests.length).toBe(before);
  });
});
