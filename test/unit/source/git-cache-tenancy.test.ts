// The Git cache door, on a real `git http-backend` behind basic auth: a checkout (or a
// ref resolution) fetched with credentials is served only to a fetch presenting the same
// credentials. Any other fetch — none, wrong ones — misses and is refused by the Git server itself.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../../../dev/git-http-server.ts';
import { SourceNotReadyError } from '../../../adapters/source/errors.ts';
import {
  fetchGitSource as fetchThrough,
  type GitAuth,
  type GitSourceInput,
  type GitSourceOptions,
} from '../../../adapters/source/git.ts';
import { createEgress, type Egress } from '../../../adapters/egress/client.ts';
import { parseEgressAllow } from '../../../domain/egress/policy.ts';
import { createGitCache, type GitCache } from '../../../adapters/source/git-cache.ts';
import { createRefCache } from '../../../adapters/source/ref-cache.ts';
import { createRepo } from '../../harness/git-fixtures.ts';

const PASSWORD = 'team-a-pa55word-0b9e';
const OWNER: GitAuth = { username: 'team-a', password: PASSWORD };
const WRONG: GitAuth = { username: 'team-a', password: 'a-guess-0000' };

let root: string;
let server: GitHttpServer;
let commit: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'convoy-git-tenancy-'));
  ({ commit } = await createRepo(root, 'private', {
    'deploy/cm.yaml': 'kind: ConfigMap\nsecret-plan: team-a\n',
  }));
  server = await startGitHttpServer({ projectRoot: root, auth: OWNER });
  // Loopback is refused by the egress policy: the file's Git server is allowed, as an installation lists its own.
  egress = createEgress({ allow: parseEgressAllow(new URL(server.url).host, 'test'), clusterNetworks: [] });
});

let egress: Egress;
const fetchGitSource = (input: GitSourceInput, cache: GitCache, options: GitSourceOptions = {}) =>
  fetchThrough(input, cache, { egress, ...options });

afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const input = (auth: GitAuth | undefined, ref: GitSourceInput['ref'] = { commit }): GitSourceInput => ({
  url: `${server.url}/private.git`,
  ref,
  path: 'deploy',
  ...(auth ? { auth } : {}),
});

async function newCache(dir?: string): Promise<GitCache> {
  return createGitCache({ dir: dir ?? (await mkdtemp(join(root, 'cache-'))) });
}

async function refusal(promise: Promise<unknown>): Promise<SourceNotReadyError> {
  const outcome = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(outcome instanceof SourceNotReadyError))
    throw new Error(`expected a SourceNotReadyError, got ${String(outcome)}`);
  return outcome;
}

/** Requests the server answered (any status) since `mark`. */
const since = (mark: number) => server.requests.slice(mark);

describe('git cache: a checkout is served only to the credentials it was fetched with', () => {
  it('no credentials, same URL and full commit SHA as a cached authenticated checkout → the server is asked and requires authentication', async () => {
    const cache = await newCache();
    const owner = await fetchGitSource(input(OWNER), cache);
    expect(owner.cacheHit).toBe(false);
    const mark = server.requests.length;
    const err = await refusal(fetchGitSource(input(undefined), cache));
    expect(since(mark).map((r) => r.status)).toContain(401);
    expect(err.field).toBe('spec.source.git.secretRef');
    expect(err.message).toContain('requires authentication');
    expect(err.message).toContain('spec.source.git presents no credentials');
    expect(err.message).not.toContain(PASSWORD);
    expect(cache.stats()).toMatchObject({ hits: 0, misses: 2, entries: 1 });
  });

  it('wrong credentials → the server is asked and refuses them; the message has neither password', async () => {
    const cache = await newCache();
    await fetchGitSource(input(OWNER), cache);
    const mark = server.requests.length;
    const err = await refusal(fetchGitSource(input(WRONG), cache));
    expect(since(mark).map((r) => r.status)).toContain(401);
    expect(err.message).toContain('did not accept the credentials presented');
    expect(err.message).not.toContain(PASSWORD);
    expect(err.message).not.toContain('a-guess-0000');
  });

  it('the same credentials again → a cache hit with no request to the Git server', async () => {
    const cache = await newCache();
    await fetchGitSource(input(OWNER), cache);
    const mark = server.requests.length;
    const again = await fetchGitSource(input(OWNER), cache);
    expect(again.cacheHit).toBe(true);
    expect(since(mark)).toHaveLength(0);
  });

  it('a fetch without credentials does not share an authenticated fill in flight', async () => {
    const cache = await newCache();
    const [owner, anonymous] = await Promise.allSettled([
      fetchGitSource(input(OWNER), cache),
      fetchGitSource(input(undefined), cache),
    ]);
    expect(owner.status).toBe('fulfilled');
    expect(anonymous.status).toBe('rejected');
    expect((anonymous as PromiseRejectedResult).reason).toBeInstanceOf(SourceNotReadyError);
  });

  it('a new process adopting the cache directory serves the authenticated checkout to the same credentials only', async () => {
    const dir = await mkdtemp(join(root, 'cache-'));
    await fetchGitSource(input(OWNER), await newCache(dir));
    await refusal(fetchGitSource(input(undefined), await newCache(dir)));
    const mark = server.requests.length;
    expect((await fetchGitSource(input(OWNER), await newCache(dir))).cacheHit).toBe(true);
    expect(since(mark)).toHaveLength(0);
  });

  it('an entry of the earlier (url, commit) layout left on disk is never served', async () => {
    const dir = await mkdtemp(join(root, 'cache-'));
    const oldKey = createHash('sha256').update(`${server.url}/private\n${commit}`).digest('hex').slice(0, 40);
    await mkdir(join(dir, oldKey, 'deploy'), { recursive: true });
    await writeFile(join(dir, oldKey, 'deploy', 'cm.yaml'), 'kind: ConfigMap\n');
    await refusal(fetchGitSource(input(undefined), await newCache(dir)));
  });

  it('a branch resolved through the shared ref cache with credentials is not answered to a fetch without them', async () => {
    const refs = createRefCache({ ttlMs: 60_000 });
    const cache = await newCache();
    await fetchGitSource(input(OWNER, { branch: 'main' }), cache, { refCache: refs });
    const mark = server.requests.length;
    const err = await refusal(
      fetchGitSource(input(undefined, { branch: 'main' }), cache, { refCache: refs }),
    );
    expect(err.message).toContain('requires authentication for branch "main"');
    expect(since(mark).map((r) => r.status)).toContain(401);
    // The owner's answer is still shared: no request at all within the window.
    const ownerMark = server.requests.length;
    expect((await fetchGitSource(input(OWNER, { branch: 'main' }), cache, { refCache: refs })).cacheHit).toBe(
      true,
    );
    expect(since(ownerMark)).toHaveLength(0);
  });
});
