// The pure key derivation of the Git cache's per-credentials keys: which credentials an answer was fetched
// with, as a digest (or `anonymous`), and the checkout directory name derived from it.
import { describe, expect, it } from 'vitest';
import { credentialsKey } from '../../../adapters/source/credentials-key.ts';
import { gitCacheKey } from '../../../adapters/source/git-cache.ts';

const PASSWORD = 'pa55-word-must-not-appear';
const TOKEN = 'tok-must-not-appear-0123';
const COMMIT = 'a'.repeat(40);

describe('credentials key', () => {
  it('no credentials → "anonymous"', () => {
    expect(credentialsKey(undefined)).toBe('anonymous');
  });

  it('the same credentials → the same key (the same Release hits its own cache again)', () => {
    expect(credentialsKey({ username: 'git', password: PASSWORD })).toBe(
      credentialsKey({ username: 'git', password: PASSWORD }),
    );
    expect(credentialsKey({ bearerToken: TOKEN })).toBe(credentialsKey({ bearerToken: TOKEN }));
  });

  it('other credentials → another key: another password, user, token or kind', () => {
    const keys = [
      credentialsKey(undefined),
      credentialsKey({ username: 'git', password: PASSWORD }),
      credentialsKey({ username: 'git', password: `${PASSWORD}x` }),
      credentialsKey({ username: 'other', password: PASSWORD }),
      credentialsKey({ username: '', password: '' }),
      credentialsKey({ bearerToken: TOKEN }),
      credentialsKey({ bearerToken: PASSWORD }),
      // A separator moved between user and password is other credentials.
      credentialsKey({ username: 'a:b', password: 'c' }),
      credentialsKey({ username: 'a', password: 'b:c' }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('is a digest: the credentials themselves are not in it', () => {
    const basic = credentialsKey({ username: 'git-user', password: PASSWORD });
    const bearer = credentialsKey({ bearerToken: TOKEN });
    for (const key of [basic, bearer]) {
      expect(key).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(key).not.toContain(PASSWORD);
      expect(key).not.toContain(TOKEN);
      expect(key).not.toContain('git-user');
    }
  });
});

describe('git checkout cache key', () => {
  const url = 'https://git.example/team/apps.git';

  it('a checkout made with credentials has another key than the anonymous one and than other credentials', () => {
    const anonymous = gitCacheKey({ url, commit: COMMIT, credentials: 'anonymous' });
    const a = gitCacheKey({
      url,
      commit: COMMIT,
      credentials: credentialsKey({ username: 'a', password: PASSWORD }),
    });
    const b = gitCacheKey({
      url,
      commit: COMMIT,
      credentials: credentialsKey({ username: 'a', password: 'guess' }),
    });
    expect(new Set([anonymous, a, b]).size).toBe(3);
    expect(a).toMatch(/^[0-9a-f]{40}$/);
  });

  it('the same repository, commit and credentials → the same key, however the URL and commit are spelled', () => {
    const credentials = credentialsKey({ bearerToken: TOKEN });
    const key = gitCacheKey({ url, commit: COMMIT, credentials });
    expect(
      gitCacheKey({ url: 'https://git.example/team/apps/', commit: COMMIT.toUpperCase(), credentials }),
    ).toBe(key);
    // Credentials embedded in the URL are not the key's credentials: those are passed apart.
    expect(
      gitCacheKey({ url: 'https://user:pw@git.example/team/apps.git', commit: COMMIT, credentials }),
    ).toBe(key);
  });
});
