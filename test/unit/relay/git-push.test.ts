import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { GitRef } from '../../../domain/api/index.ts';
import {
  constantTimeEqual,
  matchReleases,
  matchReleaseSets,
  normalizeRepoUrl,
  pushCause,
  readGitWebhook,
  refFollowsPush,
  type GitPush,
  type GitRepositoryLike,
  type GitWebhookDelivery,
  type ReleaseSetLike,
} from '../../../domain/relay/git-push.ts';
import { createGitWebhookHandler, type GitWebhookOptions } from '../../../relay/http/git-hooks.ts';
import { release } from './fixtures.ts';

const SECRET = 'It5-a-s3cret';
const SHA = '0123456789abcdef0123456789abcdef01234567';
const ZEROS = '0'.repeat(40);
const bytes = (text: string) => new TextEncoder().encode(text);
const hmac = (body: string, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');

// Payloads trimmed to what the providers send for a push (documented examples).
const githubPush = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    ref: 'refs/heads/main',
    before: ZEROS.replace(/0$/, '1'),
    after: SHA,
    deleted: false,
    repository: {
      full_name: 'Org/Apps',
      html_url: 'https://github.com/Org/Apps',
      clone_url: 'https://github.com/Org/Apps.git',
      ssh_url: 'git@github.com:Org/Apps.git',
      git_url: 'git://github.com/Org/Apps.git',
      url: 'https://github.com/Org/Apps',
    },
    ...over,
  });

const gitlabPush = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    object_kind: 'push',
    ref: 'refs/heads/main',
    after: SHA,
    checkout_sha: SHA,
    project: {
      web_url: 'https://gitlab.example.com/group/apps',
      git_ssh_url: 'git@gitlab.example.com:group/apps.git',
      git_http_url: 'https://gitlab.example.com/group/apps.git',
    },
    repository: {
      url: 'git@gitlab.example.com:group/apps.git',
      homepage: 'https://gitlab.example.com/group/apps',
    },
    ...over,
  });

const giteaPush = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    ref: 'refs/heads/main',
    after: SHA,
    repository: {
      html_url: 'http://gitea.example.com:3000/org/apps',
      clone_url: 'http://gitea.example.com:3000/org/apps.git',
      ssh_url: 'ssh://git@gitea.example.com:2222/org/apps.git',
    },
    ...over,
  });

const headers = (entries: Record<string, string>) => new Headers(entries);

const github = (body: string, extra: Record<string, string> = {}, event = 'push') =>
  readGitWebhook(
    headers({
      'X-GitHub-Event': event,
      'X-Hub-Signature-256': `sha256=${hmac(body)}`,
      'Content-Type': 'application/json',
      ...extra,
    }),
    bytes(body),
    SECRET,
  );
const gitlab = (body: string, extra: Record<string, string> = {}, event = 'Push Hook') =>
  readGitWebhook(
    headers({ 'X-Gitlab-Event': event, 'X-Gitlab-Token': SECRET, ...extra }),
    bytes(body),
    SECRET,
  );
const gitea = (body: string, extra: Record<string, string> = {}, event = 'push') =>
  readGitWebhook(
    headers({ 'X-Gitea-Event': event, 'X-GitHub-Event': event, 'X-Gitea-Signature': hmac(body), ...extra }),
    bytes(body),
    SECRET,
  );

const pushOf = (delivery: GitWebhookDelivery): GitPush => {
  if (delivery.kind !== 'push') throw new Error(`expected a push, got ${JSON.stringify(delivery)}`);
  return delivery.push;
};
const noSecretIn = (delivery: GitWebhookDelivery, ...secrets: string[]) => {
  const text = JSON.stringify(delivery);
  for (const secret of secrets) expect(text).not.toContain(secret);
};

describe('GitHub push delivery', () => {
  it('valid signature → the push with every repository URL normalized, the ref and the commit', () => {
    expect(pushOf(github(githubPush()))).toEqual({
      provider: 'github',
      repoUrls: ['github.com/Org/Apps'],
      ref: 'refs/heads/main',
      after: SHA,
      deleted: false,
    });
  });

  it('tampered body → unauthorized', () => {
    const body = githubPush();
    const delivery = readGitWebhook(
      headers({ 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': `sha256=${hmac(body)}` }),
      bytes(body.replace('refs/heads/main', 'refs/heads/prod')),
      SECRET,
    );
    expect(delivery).toMatchObject({ kind: 'unauthorized', provider: 'github' });
  });

  it('signed with another secret → unauthorized, and neither secret nor signature is in the reason', () => {
    const body = githubPush();
    const signature = hmac(body, 'other-secret');
    const delivery = github(body, { 'X-Hub-Signature-256': `sha256=${signature}` });
    expect(delivery).toMatchObject({ kind: 'unauthorized', provider: 'github' });
    noSecretIn(delivery, SECRET, 'other-secret', signature);
  });

  it('missing X-Hub-Signature-256 → unauthorized naming the header', () => {
    const body = githubPush();
    const delivery = readGitWebhook(headers({ 'X-GitHub-Event': 'push' }), bytes(body), SECRET);
    expect(delivery).toMatchObject({
      kind: 'unauthorized',
      reason: expect.stringContaining('X-Hub-Signature-256') as unknown,
    });
  });

  it('signature without the sha256= prefix or not 64 hex digits → unauthorized', () => {
    const body = githubPush();
    expect(github(body, { 'X-Hub-Signature-256': hmac(body) })).toMatchObject({ kind: 'unauthorized' });
    expect(github(body, { 'X-Hub-Signature-256': `sha256=${hmac(body).slice(2)}` })).toMatchObject({
      kind: 'unauthorized',
    });
    expect(github(body, { 'X-Hub-Signature-256': `sha256=${'z'.repeat(64)}` })).toMatchObject({
      kind: 'unauthorized',
    });
  });

  it('the legacy SHA-1 X-Hub-Signature alone is not accepted', () => {
    const body = githubPush();
    const sha1 = createHmac('sha1', SECRET).update(body).digest('hex');
    expect(
      readGitWebhook(
        headers({ 'X-GitHub-Event': 'push', 'X-Hub-Signature': `sha1=${sha1}` }),
        bytes(body),
        SECRET,
      ),
    ).toMatchObject({ kind: 'unauthorized' });
  });

  it('ping, signed → ping; ping with a wrong signature → unauthorized', () => {
    const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    expect(github(body, {}, 'ping')).toEqual({ kind: 'ping', provider: 'github' });
    expect(github(body, { 'X-Hub-Signature-256': `sha256=${hmac(body, 'x')}` }, 'ping')).toMatchObject({
      kind: 'unauthorized',
    });
  });

  it('another event (pull_request) → ignored', () => {
    expect(github('{}', {}, 'pull_request')).toEqual({
      kind: 'ignored',
      provider: 'github',
      event: 'pull_request',
    });
  });

  it('tag push → the tag ref', () => {
    expect(pushOf(github(githubPush({ ref: 'refs/tags/v1.2.0' }))).ref).toBe('refs/tags/v1.2.0');
  });

  it('branch deletion → a push marked deleted', () => {
    expect(pushOf(github(githubPush({ after: ZEROS, deleted: true })))).toMatchObject({ deleted: true });
  });

  it('form-encoded body (payload=…) is signed over the raw form and read from payload', () => {
    const form = new URLSearchParams({ payload: githubPush() }).toString();
    const delivery = github(form, { 'Content-Type': 'application/x-www-form-urlencoded' });
    expect(pushOf(delivery).repoUrls).toEqual(['github.com/Org/Apps']);
  });

  it('authentic but not JSON → invalid', () => {
    expect(github('not json')).toMatchObject({ kind: 'invalid', provider: 'github' });
  });

  it('authentic but without ref or repository URL → invalid naming the field', () => {
    expect(
      github(JSON.stringify({ after: SHA, repository: { clone_url: 'https://github.com/o/r.git' } })),
    ).toMatchObject({
      kind: 'invalid',
      reason: expect.stringContaining('ref') as unknown,
    });
    expect(github(githubPush({ repository: {} }))).toMatchObject({
      kind: 'invalid',
      reason: expect.stringContaining('repository URL') as unknown,
    });
  });

  it('after that is not a commit id → invalid', () => {
    expect(github(githubPush({ after: 'main' }))).toMatchObject({ kind: 'invalid' });
  });
});

describe('GitLab push delivery', () => {
  it('valid token → the push with project and repository URLs normalized', () => {
    expect(pushOf(gitlab(gitlabPush()))).toEqual({
      provider: 'gitlab',
      repoUrls: ['gitlab.example.com/group/apps'],
      ref: 'refs/heads/main',
      after: SHA,
      deleted: false,
    });
  });

  it('Tag Push Hook → the tag ref', () => {
    expect(
      pushOf(gitlab(gitlabPush({ object_kind: 'tag_push', ref: 'refs/tags/v2' }), {}, 'Tag Push Hook')).ref,
    ).toBe('refs/tags/v2');
  });

  it('tampered body with the right token → accepted (GitLab signs nothing; the token is the proof)', () => {
    expect(pushOf(gitlab(gitlabPush({ ref: 'refs/heads/prod' }))).ref).toBe('refs/heads/prod');
  });

  it('wrong token → unauthorized, the tokens not in the reason', () => {
    const delivery = gitlab(gitlabPush(), { 'X-Gitlab-Token': 'wrong-token' });
    expect(delivery).toMatchObject({ kind: 'unauthorized', provider: 'gitlab' });
    noSecretIn(delivery, SECRET, 'wrong-token');
  });

  it('token that is a prefix of the secret → unauthorized', () => {
    expect(gitlab(gitlabPush(), { 'X-Gitlab-Token': SECRET.slice(0, 4) })).toMatchObject({
      kind: 'unauthorized',
    });
  });

  it('missing X-Gitlab-Token → unauthorized naming the header', () => {
    const delivery = readGitWebhook(headers({ 'X-Gitlab-Event': 'Push Hook' }), bytes(gitlabPush()), SECRET);
    expect(delivery).toMatchObject({
      kind: 'unauthorized',
      reason: expect.stringContaining('X-Gitlab-Token') as unknown,
    });
  });

  it('Merge Request Hook → ignored', () => {
    expect(gitlab('{}', {}, 'Merge Request Hook')).toEqual({
      kind: 'ignored',
      provider: 'gitlab',
      event: 'Merge Request Hook',
    });
  });
});

describe('Gitea push delivery', () => {
  it('valid X-Gitea-Signature → the push; the http port is kept, the ssh port dropped', () => {
    expect(pushOf(gitea(giteaPush()))).toEqual({
      provider: 'gitea',
      repoUrls: ['gitea.example.com:3000/org/apps', 'gitea.example.com/org/apps'],
      ref: 'refs/heads/main',
      after: SHA,
      deleted: false,
    });
  });

  it('is told from GitHub by X-Gitea-Event even though it also sends X-GitHub-Event', () => {
    expect(pushOf(gitea(giteaPush())).provider).toBe('gitea');
  });

  it('tampered body → unauthorized', () => {
    const body = giteaPush();
    const delivery = gitea(body.replace('main', 'prod'), { 'X-Gitea-Signature': hmac(body) });
    expect(delivery).toMatchObject({ kind: 'unauthorized', provider: 'gitea' });
  });

  it('wrong secret → unauthorized, neither secret nor signature in the reason', () => {
    const body = giteaPush();
    const signature = hmac(body, 'nope');
    const delivery = gitea(body, { 'X-Gitea-Signature': signature });
    expect(delivery).toMatchObject({ kind: 'unauthorized' });
    noSecretIn(delivery, SECRET, signature);
  });

  it('missing X-Gitea-Signature → unauthorized naming the header', () => {
    const delivery = readGitWebhook(headers({ 'X-Gitea-Event': 'push' }), bytes(giteaPush()), SECRET);
    expect(delivery).toMatchObject({
      kind: 'unauthorized',
      reason: expect.stringContaining('X-Gitea-Signature') as unknown,
    });
  });

  it('X-Hub-Signature-256 is accepted when X-Gitea-Signature is absent (newer Gitea sends both)', () => {
    const body = giteaPush();
    const delivery = readGitWebhook(
      headers({ 'X-Gitea-Event': 'push', 'X-Hub-Signature-256': `sha256=${hmac(body)}` }),
      bytes(body),
      SECRET,
    );
    expect(delivery.kind).toBe('push');
  });

  it('create event → ignored', () => {
    expect(gitea('{}', {}, 'create')).toEqual({ kind: 'ignored', provider: 'gitea', event: 'create' });
  });
});

describe('any delivery', () => {
  it('no GitHub, GitLab or Gitea event header → unknown provider', () => {
    expect(
      readGitWebhook(headers({ 'X-Hub-Signature-256': 'sha256=00' }), bytes('{}'), SECRET),
    ).toMatchObject({ kind: 'unknown-provider' });
  });

  it('an empty configured secret refuses every delivery, even one signed with the empty key', () => {
    const body = githubPush();
    expect(
      readGitWebhook(
        headers({ 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': `sha256=${hmac(body, '')}` }),
        bytes(body),
        '',
      ),
    ).toMatchObject({
      kind: 'unauthorized',
    });
  });

  it('constantTimeEqual compares strings of any length', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', 'a')).toBe(false);
  });

  it('the cause is "git push <ref> <sha7>"', () => {
    expect(pushCause(pushOf(github(githubPush())))).toBe('git push refs/heads/main 0123456');
  });
});

describe('normalizeRepoUrl', () => {
  it.each([
    ['https://github.com/org/repo', 'github.com/org/repo'],
    ['https://github.com/org/repo.git', 'github.com/org/repo'],
    ['https://github.com/org/repo/', 'github.com/org/repo'],
    ['https://github.com/org/repo.git/', 'github.com/org/repo'],
    ['http://github.com/org/repo', 'github.com/org/repo'],
    ['HTTPS://GitHub.COM/org/repo', 'github.com/org/repo'],
    ['https://github.com/Org/Repo', 'github.com/Org/Repo'],
    ['https://user:pa55@github.com/org/repo.git', 'github.com/org/repo'],
    ['https://oauth2@github.com/org/repo', 'github.com/org/repo'],
    ['https://github.com:443/org/repo', 'github.com/org/repo'],
    ['http://github.com:80/org/repo', 'github.com/org/repo'],
    ['https://git.example.com:8443/org/repo', 'git.example.com:8443/org/repo'],
    ['https://github.com//org//repo', 'github.com/org/repo'],
    ['https://github.com/org/repo.git?ref=main#frag', 'github.com/org/repo'],
    ['  https://github.com/org/repo  ', 'github.com/org/repo'],
    ['git@github.com:org/repo.git', 'github.com/org/repo'],
    ['git@GitHub.com:org/repo', 'github.com/org/repo'],
    ['github.com:org/repo.git', 'github.com/org/repo'],
    ['ssh://git@github.com/org/repo.git', 'github.com/org/repo'],
    ['ssh://git@gitea.example.com:2222/org/repo.git', 'gitea.example.com/org/repo'],
    ['git+ssh://git@github.com/org/repo.git', 'github.com/org/repo'],
    ['git://github.com/org/repo.git', 'github.com/org/repo'],
    ['https://gitlab.example.com/group/sub/repo.git', 'gitlab.example.com/group/sub/repo'],
    ['https://[::1]:3000/org/repo', '[::1]:3000/org/repo'],
  ])('%s → %s', (url, key) => {
    expect(normalizeRepoUrl(url)).toBe(key);
  });

  it.each([
    [''],
    ['   '],
    ['/srv/git/repo.git'],
    ['file:///srv/git/repo.git'],
    ['ftp://host/repo'],
    ['not a url'],
    ['https://'],
  ])('%j is not a remote repository URL → undefined', (url) => {
    expect(normalizeRepoUrl(url)).toBeUndefined();
  });
});

describe('refFollowsPush', () => {
  const rows: [string, GitRef, string, boolean][] = [
    ['branch ref, same branch pushed', { branch: 'main' }, 'refs/heads/main', true],
    ['branch ref, other branch pushed', { branch: 'main' }, 'refs/heads/dev', false],
    ['branch ref, branch names compare exactly', { branch: 'Main' }, 'refs/heads/main', false],
    ['branch ref, a tag of the same name pushed', { branch: 'main' }, 'refs/tags/main', false],
    ['tag ref, same tag pushed', { tag: 'v1.0.0' }, 'refs/tags/v1.0.0', true],
    ['tag ref, another tag pushed', { tag: 'v1.0.0' }, 'refs/tags/v1.1.0', false],
    ['tag ref, a branch pushed', { tag: 'v1.0.0' }, 'refs/heads/v1.0.0', false],
    ['semver ref, any tag pushed', { semver: '>=1.0.0' }, 'refs/tags/v2.0.0', true],
    ['semver ref, a branch pushed', { semver: '>=1.0.0' }, 'refs/heads/main', false],
    ['commit ref, never', { commit: SHA }, 'refs/heads/main', false],
    ['commit ref, never (tags either)', { commit: SHA }, 'refs/tags/v1', false],
    ['other refs (pull requests) never', { branch: 'main' }, 'refs/pull/1/head', false],
  ];
  it.each(rows)('%s', (_row, ref, pushed, expected) => {
    expect(refFollowsPush(ref, pushed)).toBe(expected);
  });
});

describe('matchReleases', () => {
  const push = (over: Partial<GitPush> = {}): GitPush => ({
    provider: 'github',
    repoUrls: ['github.com/Org/Apps'],
    ref: 'refs/heads/main',
    after: SHA,
    deleted: false,
    ...over,
  });
  const gitSource = (url: string, ref: GitRef = { branch: 'main' }) => ({ source: { git: { url, ref } } });
  const repo = (
    name: string,
    url: string,
    ref: GitRef = { branch: 'main' },
    namespace = 'team-a',
  ): GitRepositoryLike => ({
    metadata: { name, namespace },
    spec: { url, ref },
  });
  const names = (matched: ReturnType<typeof matchReleases>) =>
    matched.map((r) => `${r.metadata.namespace}/${r.metadata.name}`);

  it('source.git with the pushed repository (any URL spelling) and branch → matched', () => {
    const releases = [
      release({ name: 'a', spec: gitSource('https://github.com/Org/Apps.git') }),
      release({ name: 'b', spec: gitSource('http://GITHUB.com/org/apps/') }),
      release({ name: 'c', spec: gitSource('https://token@github.com/Org/Apps') }),
    ];
    expect(names(matchReleases(push(), releases, []))).toEqual(['team-a/a', 'team-a/b', 'team-a/c']);
  });

  it('source.git on another branch, or another repository → not matched', () => {
    const releases = [
      release({
        name: 'other-branch',
        spec: gitSource('https://github.com/Org/Apps.git', { branch: 'dev' }),
      }),
      release({ name: 'other-repo', spec: gitSource('https://github.com/Org/Apps2.git') }),
      release({ name: 'other-host', spec: gitSource('https://gitlab.com/Org/Apps.git') }),
    ];
    expect(matchReleases(push(), releases, [])).toEqual([]);
  });

  it('source.gitRepositoryRef to a GitRepository of the pushed repository and branch → matched', () => {
    const releases = [
      release({ name: 'via-repo', spec: { source: { gitRepositoryRef: { name: 'platform' } } } }),
    ];
    expect(names(matchReleases(push(), releases, [repo('platform', 'git@github.com:Org/Apps.git')]))).toEqual(
      ['team-a/via-repo'],
    );
    expect(
      matchReleases(push(), releases, [repo('platform', 'https://github.com/Org/Apps', { branch: 'dev' })]),
    ).toEqual([]);
  });

  it('a GitRepository of the same name in another namespace → not matched', () => {
    const releases = [
      release({ name: 'via-repo', spec: { source: { gitRepositoryRef: { name: 'platform' } } } }),
    ];
    expect(
      matchReleases(push(), releases, [
        repo('platform', 'https://github.com/Org/Apps', { branch: 'main' }, 'team-b'),
      ]),
    ).toEqual([]);
  });

  it('a values layer of kind GitRepository with the pushed repository and branch → matched', () => {
    const releases = [
      release({
        name: 'values',
        spec: {
          ...gitSource('https://github.com/Org/Charts.git'),
          content: {
            type: 'Helm',
            helm: { valuesFrom: [{ kind: 'GitRepository', name: 'values-repo', path: 'prod.yaml' }] },
          },
        },
      }),
    ];
    expect(
      names(matchReleases(push(), releases, [repo('values-repo', 'https://github.com/Org/Apps.git')])),
    ).toEqual(['team-a/values']);
  });

  it('a missing GitRepository → not matched', () => {
    const releases = [
      release({ name: 'dangling', spec: { source: { gitRepositoryRef: { name: 'gone' } } } }),
    ];
    expect(matchReleases(push(), releases, [])).toEqual([]);
  });

  it('tag push → Releases on that tag and on semver ranges; not branches or commits', () => {
    const url = 'https://github.com/Org/Apps';
    const releases = [
      release({ name: 'tag', spec: gitSource(url, { tag: 'v1.2.0' }) }),
      release({ name: 'old-tag', spec: gitSource(url, { tag: 'v1.1.0' }) }),
      release({ name: 'range', spec: gitSource(url, { semver: '1.x' }) }),
      release({ name: 'branch', spec: gitSource(url) }),
      release({ name: 'commit', spec: gitSource(url, { commit: SHA }) }),
    ];
    expect(names(matchReleases(push({ ref: 'refs/tags/v1.2.0' }), releases, []))).toEqual([
      'team-a/range',
      'team-a/tag',
    ]);
  });

  it('commit refs never match a branch push', () => {
    const releases = [
      release({ name: 'commit', spec: gitSource('https://github.com/Org/Apps', { commit: SHA }) }),
    ];
    expect(matchReleases(push(), releases, [])).toEqual([]);
  });

  it('a push deleting its ref matches nothing', () => {
    const releases = [release({ name: 'a', spec: gitSource('https://github.com/Org/Apps') })];
    expect(matchReleases(push({ deleted: true, after: ZEROS }), releases, [])).toEqual([]);
  });

  it('suspended Releases are not matched', () => {
    const releases = [
      release({ name: 'paused', spec: { ...gitSource('https://github.com/Org/Apps'), suspend: true } }),
    ];
    expect(matchReleases(push(), releases, [])).toEqual([]);
  });

  it('helm sources never match', () => {
    const releases = [
      release({
        name: 'chart',
        spec: {
          source: { helm: { repository: 'https://github.com/Org/Apps', chart: 'x', version: '1.0.0' } },
        },
      }),
    ];
    expect(matchReleases(push(), releases, [])).toEqual([]);
  });

  it('results are ordered by namespace then name, each Release once', () => {
    const spec = gitSource('https://github.com/Org/Apps');
    const releases = [
      release({ name: 'z', namespace: 'a', spec }),
      release({ name: 'b', namespace: 'b', spec }),
      release({
        name: 'a',
        namespace: 'b',
        spec: {
          ...spec,
          content: {
            type: 'Helm',
            helm: { valuesFrom: [{ kind: 'GitRepository', name: 'r', path: 'v.yaml' }] },
          },
        },
      }),
    ];
    expect(
      names(
        matchReleases(push(), releases, [repo('r', 'https://github.com/Org/Apps', { branch: 'main' }, 'b')]),
      ),
    ).toEqual(['a/z', 'b/a', 'b/b']);
  });
});

describe('matchReleaseSets: a set follows what its children would follow', () => {
  const push = (over: Partial<GitPush> = {}): GitPush => ({
    provider: 'github',
    repoUrls: ['github.com/Org/Apps'],
    ref: 'refs/heads/main',
    after: SHA,
    deleted: false,
    ...over,
  });
  const rset = (
    name: string,
    template: unknown,
    overrides?: unknown[],
    namespace = 'team-a',
  ): ReleaseSetLike => ({
    metadata: { name, namespace, uid: `uid-${name}` },
    spec: {
      template: { spec: template },
      ...(overrides === undefined ? {} : { overrides: overrides.map((spec) => ({ spec })) }),
    },
  });
  const git = (url: string, ref: Record<string, string> = { branch: 'main' }) => ({
    source: { git: { url, ref } },
  });
  const names = (matched: readonly ReleaseSetLike[]) =>
    matched.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);

  it('the template source (any URL spelling) on the pushed branch → matched, as for a Release; another branch, a pinned commit, another repository → not', () => {
    const sets = [
      rset('a', git('https://github.com/Org/Apps.git')),
      rset('b', git('http://GITHUB.com/org/apps/')),
      rset('other-branch', git('https://github.com/Org/Apps', { branch: 'dev' })),
      rset('commit', git('https://github.com/Org/Apps', { commit: 'abcdef1' })),
      rset('other-repo', git('https://github.com/Org/Other')),
    ];
    expect(names(matchReleaseSets(push(), sets, []))).toEqual(['team-a/a', 'team-a/b']);
    expect(names(matchReleaseSets(push({ ref: 'refs/heads/dev' }), sets, []))).toEqual([
      'team-a/other-branch',
    ]);
    expect(matchReleaseSets(push({ deleted: true }), sets, [])).toEqual([]);
  });

  it('an override that points some Clusters at the pushed repository or branch matches; null removes a source field as the merge does', () => {
    const sets = [
      rset('override-branch', git('https://github.com/Org/Apps', { branch: 'stable' }), [
        { source: { git: { ref: { branch: 'main' } } } },
      ]),
      rset('override-repo', git('https://github.com/Org/Other'), [
        { source: { git: { url: 'https://github.com/Org/Apps' } } },
      ]),
      rset('override-elsewhere', git('https://github.com/Org/Other'), [
        { source: { git: { url: 'https://github.com/Org/Third' } } },
      ]),
    ];
    expect(names(matchReleaseSets(push(), sets, []))).toEqual([
      'team-a/override-branch',
      'team-a/override-repo',
    ]);
  });

  it("a GitRepository of the set's namespace (source or values layer) matches; a suspended template, a placeholder URL and a malformed template do not", () => {
    const repos: GitRepositoryLike[] = [
      {
        metadata: { name: 'platform', namespace: 'team-a' },
        spec: { url: 'https://github.com/Org/Apps', ref: { branch: 'main' } },
      },
    ];
    const sets = [
      rset('by-ref', { source: { gitRepositoryRef: { name: 'platform' } } }),
      rset('by-layer', {
        ...git('https://github.com/Org/Charts'),
        content: { helm: { valuesFrom: [{ kind: 'GitRepository', name: 'platform', path: 'v.yaml' }] } },
      }),
      rset('other-ns', { source: { gitRepositoryRef: { name: 'platform' } } }, undefined, 'team-b'),
      rset('suspended', { ...git('https://github.com/Org/Apps'), suspend: true }),
      rset('placeholder', git('https://github.com/Org/${cluster.labels.repo}')),
      rset('malformed', { source: { git: { url: 7 } } }),
    ];
    expect(names(matchReleaseSets(push(), sets, repos))).toEqual(['team-a/by-layer', 'team-a/by-ref']);
  });
});

describe('webhook handler (fake Release source)', () => {
  const url = 'https://github.com/Org/Apps';
  const rawRelease = (name: string, spec: Record<string, unknown>) => ({
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
    spec: { cluster: { name: 'prod' }, ...spec },
  });
  const setup = (over: Partial<GitWebhookOptions> = {}) => {
    const sent: string[] = [];
    const logs: string[] = [];
    const log = (msg: string, fields?: Readonly<Record<string, unknown>>) =>
      void logs.push(`${msg} ${JSON.stringify(fields ?? {})}`);
    const handler = createGitWebhookHandler({
      secret: SECRET,
      releases: {
        list: () =>
          Promise.resolve({
            releases: [
              rawRelease('a', { source: { git: { url, ref: { branch: 'main' } } } }),
              { kind: 'Release', metadata: { name: 'broken' }, spec: 7 },
            ],
            gitRepositories: [],
          }),
      },
      enqueue: (loop, key, cause) =>
        void sent.push(`${loop} ${key.namespace}/${key.name} ${key.uid} ${cause}`),
      logger: { info: log, warn: log, error: log },
      ...over,
    });
    return { handler, sent, logs };
  };
  const post = (body: string | ReadableStream<Uint8Array>, extra: Record<string, string> = {}) =>
    new Request('http://relay/v1/hooks/git', {
      method: 'POST',
      body,
      headers: {
        'X-GitHub-Event': 'push',
        ...(typeof body === 'string' ? { 'X-Hub-Signature-256': `sha256=${hmac(body)}` } : {}),
        ...extra,
      },
      ...(typeof body === 'string' ? {} : { duplex: 'half' }),
    });

  it('a matching push → 202 {matched} and one reconcile message per Release with cause "git push <ref> <sha7>"; unparsable Releases skipped', async () => {
    const { handler, sent, logs } = setup();
    const res = await handler(post(githubPush()));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ matched: ['team-a/a'] });
    expect(sent).toEqual(['reconcile team-a/a uid-a git push refs/heads/main 0123456']);
    expect(logs.join('\n')).toContain('Release does not parse');
    expect(logs.join('\n')).not.toContain(SECRET);
  });

  it('with ReleaseSets listed (a fleet queue): a set whose template follows the push gets a fleet message; the answer names it under matchedReleaseSets', async () => {
    const set = (name: string, repo: string) => ({
      kind: 'ReleaseSet',
      metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
      spec: { template: { spec: { source: { git: { url: repo, ref: { branch: 'main' } } } } } },
    });
    const { handler, sent } = setup({
      releases: {
        list: () =>
          Promise.resolve({
            releases: [rawRelease('a', { source: { git: { url, ref: { branch: 'main' } } } })],
            gitRepositories: [],
            releaseSets: [
              set('web', url),
              set('api', 'https://github.com/Org/Other'),
              { kind: 'ReleaseSet', metadata: { name: 'broken' } },
            ],
          }),
      },
    });
    const res = await handler(post(githubPush()));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ matched: ['team-a/a'], matchedReleaseSets: ['team-a/web'] });
    expect(sent).toEqual([
      'reconcile team-a/a uid-a git push refs/heads/main 0123456',
      'fleet team-a/web uid-web git push refs/heads/main 0123456',
    ]);
  });

  it('a secret function is read per delivery', async () => {
    const { handler } = setup({ secret: () => Promise.resolve(SECRET) });
    expect((await handler(post(githubPush()))).status).toBe(202);
  });

  it('a push deleting the branch → 200 ignored, nothing queued', async () => {
    const { handler, sent } = setup();
    const res = await handler(post(githubPush({ after: ZEROS, deleted: true })));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ignored: 'push' });
    expect(sent).toEqual([]);
  });

  it('a body over the limit without Content-Length (streamed) → 413', async () => {
    const { handler } = setup({ maxBodyBytes: 1024 });
    const chunk = new Uint8Array(600);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(chunk);
      },
    });
    const res = await handler(post(stream));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'PayloadTooLarge' });
  });

  it('exactly at the limit is accepted', async () => {
    const body = githubPush();
    const { handler } = setup({ maxBodyBytes: bytes(body).byteLength });
    expect((await handler(post(body))).status).toBe(202);
  });

  it('a wrong signature → 401 {error, message} without the secret or signature', async () => {
    const { handler, sent } = setup();
    const body = githubPush();
    const signature = hmac(body, 'guess');
    const res = await handler(post(body, { 'X-Hub-Signature-256': `sha256=${signature}` }));
    expect(res.status).toBe(401);
    const text = await res.text();
    expect(Object.keys(JSON.parse(text) as object).sort()).toEqual(['error', 'message']);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(signature);
    expect(sent).toEqual([]);
  });

  it('an authentic push payload that does not parse → 400', async () => {
    const { handler } = setup();
    const res = await handler(post('[1,2]'));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'InvalidRequest' });
  });

  it('no secret configured → 503, never accepting a delivery signed with the empty key', async () => {
    const body = githubPush();
    const { handler, sent } = setup({ secret: '' });
    const res = await handler(post(body, { 'X-Hub-Signature-256': `sha256=${hmac(body, '')}` }));
    expect(res.status).toBe(503);
    expect(sent).toEqual([]);
  });

  it('the secret cannot be read → 503', async () => {
    const { handler } = setup({
      secret: () => Promise.reject(new Error('secrets "convoy-webhook" not found')),
    });
    expect((await handler(post(githubPush()))).status).toBe(503);
  });

  it('the Releases cannot be listed → 503 Unavailable', async () => {
    const { handler } = setup({
      releases: { list: () => Promise.reject(new Error('connect ECONNREFUSED')) },
    });
    const res = await handler(post(githubPush()));
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: 'Unavailable' });
  });

  it('queueing fails → 503, so the provider shows a failed delivery to redeliver', async () => {
    const { handler } = setup({ enqueue: () => Promise.reject(new Error('queue down')) });
    expect((await handler(post(githubPush()))).status).toBe(503);
  });
});
