/**
 * On-disk cache of git checkouts keyed by (url, commit, credentials), shared by the reconciles of
 * one process (one Lambda container, one `convoy dev`). A commit's tree never changes, so an entry
 * never goes stale; the cache is bounded by evicting the least recently used whole checkouts beyond
 * `maxEntries`.
 *
 * The credentials the checkout was fetched with are part of the key (credentials-key.ts: a digest,
 * or `anonymous`): a checkout of a private repository is served only to a fetch presenting the same
 * credentials; any other fetch misses and asks the Git server, which decides.
 *
 * Layout under `dir`:
 *   <key>/             the checked-out tree of one (url, commit, credentials) — no .git inside
 *   .scratch/<random>/ work areas of fills in progress; renamed into place when complete, so an
 *                      entry directory either is complete or does not exist
 *
 * Entries left by an earlier process are adopted (oldest first) when the cache is first used.
 *
 * One process per `dir`. A checkout handed out stays valid until it is evicted: keep `maxEntries`
 * above the number of sources used concurrently.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { CredentialsKey } from './credentials-key.ts';

export interface GitCacheStats {
  hits: number;
  misses: number;
  evictions: number;
  entries: number;
}

export interface GitCacheFill {
  /** Empty directory to check the tree out into; it becomes the entry. */
  root: string;
  /** Empty directory for anything else (e.g. the git dir); deleted afterwards. */
  scratch: string;
}

/** What identifies a checkout: the repository, the commit, and the credentials it was fetched with. */
export interface GitCacheKey {
  url: string;
  commit: string;
  credentials: CredentialsKey;
}

export interface GitCache {
  readonly dir: string;
  /** The cached tree of the key, or undefined. Counts as a use for LRU. */
  get(key: GitCacheKey): Promise<string | undefined>;
  /**
   * The cached tree of the key; on a miss `fill` writes it (concurrent calls for the same key
   * share one fill). A failed fill leaves nothing behind.
   */
  getOrFill(
    key: GitCacheKey,
    fill: (target: GitCacheFill) => Promise<void>,
  ): Promise<{ root: string; hit: boolean }>;
  stats(): GitCacheStats;
}

export interface GitCacheOptions {
  dir: string;
  /** Maximum number of checkouts kept; default 16. */
  maxEntries?: number;
}

export class GitCacheError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GitCacheError';
  }
}

const SCRATCH = '.scratch';

/** The cache key of a URL: credentials, query, fragment and a trailing slash or `.git` do not matter. */
function normalizeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed
      .toString()
      .replace(/\/+$/, '')
      .replace(/\.git$/, '');
  } catch {
    return url;
  }
}

/**
 * The entry's directory name. Entries of the earlier (url, commit) layout, adopted from disk, never
 * match: their digest has no credentials line.
 */
export function gitCacheKey(key: GitCacheKey): string {
  return createHash('sha256')
    .update(`${normalizeUrl(key.url)}\n${key.commit.toLowerCase()}\n${key.credentials}`)
    .digest('hex')
    .slice(0, 40);
}

export function createGitCache(options: GitCacheOptions): GitCache {
  const dir = options.dir;
  const maxEntries = options.maxEntries ?? 16;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new GitCacheError(`createGitCache: maxEntries must be an integer >= 1, got ${maxEntries}`);
  }
  // key -> entry directory; Map iteration order is the LRU order (oldest first).
  const entries = new Map<string, string>();
  const fills = new Map<string, Promise<string>>();
  const counters = { hits: 0, misses: 0, evictions: 0 };
  let ready: Promise<void> | undefined;

  const init = async () => {
    await mkdir(dir, { recursive: true });
    await rm(join(dir, SCRATCH), { recursive: true, force: true });
    await mkdir(join(dir, SCRATCH), { recursive: true });
    const found: { key: string; mtime: number }[] = [];
    for (const name of await readdir(dir)) {
      if (!/^[0-9a-f]{40}$/.test(name)) continue;
      const info = await stat(join(dir, name));
      if (info.isDirectory()) found.push({ key: name, mtime: info.mtimeMs });
    }
    found.sort((a, b) => a.mtime - b.mtime);
    for (const { key } of found) entries.set(key, join(dir, key));
    await evict();
  };
  const ensureReady = () => {
    ready ??= init().catch((err: unknown) => {
      ready = undefined;
      throw new GitCacheError(`git cache directory ${dir} is not usable: ${String(err)}`, { cause: err });
    });
    return ready;
  };

  const touch = (key: string, root: string) => {
    entries.delete(key);
    entries.set(key, root);
  };

  const evict = async () => {
    while (entries.size > maxEntries) {
      const [key, root] = entries.entries().next().value as [string, string];
      entries.delete(key);
      counters.evictions++;
      await rm(root, { recursive: true, force: true });
    }
  };

  const fillEntry = async (key: string, fill: (target: GitCacheFill) => Promise<void>): Promise<string> => {
    const work = join(dir, SCRATCH, randomBytes(8).toString('hex'));
    const target = { root: join(work, 'tree'), scratch: join(work, 'scratch') };
    await mkdir(target.root, { recursive: true });
    await mkdir(target.scratch, { recursive: true });
    const root = join(dir, key);
    try {
      await fill(target);
      // Not indexed but on disk (another process wrote it after init): ours replaces it.
      await rm(root, { recursive: true, force: true });
      await rename(target.root, root);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    touch(key, root);
    await evict();
    return root;
  };

  const get = async (of: GitCacheKey): Promise<string | undefined> => {
    await ensureReady();
    const key = gitCacheKey(of);
    const root = entries.get(key);
    if (root === undefined) return undefined;
    touch(key, root);
    return root;
  };

  return {
    dir,
    get,
    async getOrFill(of, fill) {
      const cached = await get(of);
      if (cached !== undefined) {
        counters.hits++;
        return { root: cached, hit: true };
      }
      const key = gitCacheKey(of);
      const pending = fills.get(key);
      if (pending) {
        counters.hits++;
        return { root: await pending, hit: true };
      }
      counters.misses++;
      const promise = fillEntry(key, fill).finally(() => fills.delete(key));
      fills.set(key, promise);
      return { root: await promise, hit: false };
    },
    stats: () => ({ ...counters, entries: entries.size }),
  };
}
