// POST /v1/hooks/git through the front door (app.request(), no sockets): the real webhook handler
// listing Releases and GitRepositories from the test apiserver, with a recording enqueue.
import { createHmac, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { KubeConfig } from '@kubernetes/client-node';
import { startFauxqs, type FauxqsServer } from 'fauxqs';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { ReleaseKey } from '../../domain/relay/coalesce.ts';
import {
  LOOPS,
  parseQueueMessage,
  type Loop,
  type QueueLoop,
  type QueueMessage,
} from '../../domain/runtime/queue-message.ts';
import { createLogger } from '../../platform/logger.ts';
import { createApiApp } from '../../relay/http/app.ts';
import { createKubeAuthenticator } from '../../relay/http/auth.ts';
import { createGitWebhookHandler, createKubeWebhookReleaseSource } from '../../relay/http/git-hooks.ts';
import { createReleaseApi } from '../../relay/http/release-api.ts';
import { startRelay, type Relay } from '../../relay/relay.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';
import { fromClientNodeKubeConfig } from '../../adapters/kube/client-node-config.ts';

const SECRET = `webhook-${randomBytes(8).toString('hex')}`;
const SHA = 'c0ffee0123456789abcdef0123456789abcdef01';
// A repository no other test file uses: the source lists every namespace of the shared apiserver.
const REPO = `webhook-${randomBytes(4).toString('hex')}`;
const CLONE_URL = `https://git.example.invalid/org/${REPO}.git`;
const sign = (body: string, secret = SECRET) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

const githubPush = (ref: string) =>
  JSON.stringify({
    ref,
    after: SHA,
    deleted: false,
    repository: {
      clone_url: CLONE_URL,
      html_url: `https://git.example.invalid/org/${REPO}`,
      ssh_url: `git@git.example.invalid:org/${REPO}.git`,
    },
  });

interface Sent {
  loop: QueueLoop;
  key: ReleaseKey;
  cause: string;
}

describe('POST /v1/hooks/git', () => {
  let admin: KubeConfig;
  let ns: FreshNamespace;
  let app: ReturnType<typeof createApiApp>;
  let sent: Sent[];

  const deliver = (body: string, headers: Record<string, string>) =>
    app.request('/v1/hooks/git', {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'application/json', ...headers },
    });
  const github = (body: string, signature = sign(body), event = 'push') =>
    deliver(body, {
      'X-GitHub-Event': event,
      'X-GitHub-Delivery': randomBytes(8).toString('hex'),
      'X-Hub-Signature-256': signature,
    });

  beforeAll(async () => {
    admin = kubeConfigFor(inject('kubeconfigPath'));
    const convoy = convoyApi(admin);
    ns = await freshNamespace(admin, 'git-webhook');
    const n = ns.name;
    await convoy.create('GitRepository', n, 'platform', {
      url: `http://GIT.example.invalid/org/${REPO}/`,
      ref: { branch: 'main' },
    });
    await convoy.create('GitRepository', n, 'platform-dev', { url: CLONE_URL, ref: { branch: 'dev' } });
    // Follows the pushed repository and branch (written differently from the payload's clone_url).
    await convoy.create(
      'Release',
      n,
      'matching',
      releaseSpec({
        source: { git: { url: `https://Git.Example.Invalid/org/${REPO}`, ref: { branch: 'main' } } },
      }),
    );
    await convoy.create(
      'Release',
      n,
      'other-branch',
      releaseSpec({ source: { git: { url: CLONE_URL, ref: { branch: 'dev' } } } }),
    );
    await convoy.create(
      'Release',
      n,
      'other-repo',
      releaseSpec({
        source: { git: { url: `https://git.example.invalid/org/${REPO}-2.git`, ref: { branch: 'main' } } },
      }),
    );
    await convoy.create(
      'Release',
      n,
      'via-gitrepository',
      releaseSpec({ source: { gitRepositoryRef: { name: 'platform' } } }),
    );
    await convoy.create(
      'Release',
      n,
      'via-gitrepository-dev',
      releaseSpec({ source: { gitRepositoryRef: { name: 'platform-dev' } } }),
    );
    await convoy.create(
      'Release',
      n,
      'via-values-layer',
      releaseSpec({
        source: { git: { url: 'https://git.example.invalid/org/charts.git', ref: { branch: 'main' } } },
        content: {
          type: 'Helm',
          helm: { valuesFrom: [{ kind: 'GitRepository', name: 'platform', path: 'values/prod.yaml' }] },
        },
      }),
    );
    await convoy.create(
      'Release',
      n,
      'pinned-commit',
      releaseSpec({ source: { git: { url: CLONE_URL, ref: { commit: SHA } } } }),
    );
    await convoy.create(
      'Release',
      n,
      'on-tag',
      releaseSpec({ source: { git: { url: CLONE_URL, ref: { tag: 'v1.0.0' } } } }),
    );

    const handler = createGitWebhookHandler({
      secret: () => Promise.resolve(SECRET),
      releases: createKubeWebhookReleaseSource(fromClientNodeKubeConfig(admin)),
      enqueue: (loop, key, cause) => {
        sent.push({ loop, key, cause });
      },
    });
    app = createApiApp({
      auth: createKubeAuthenticator(fromClientNodeKubeConfig(admin)),
      releases: createReleaseApi(fromClientNodeKubeConfig(admin)),
      metrics: { render: () => '' },
      ready: () => true,
      gitWebhook: handler,
    });
  });

  beforeEach(() => {
    sent = [];
  });

  afterAll(async () => {
    await ns?.delete();
  });

  it('a GitHub push to main enqueues exactly the Releases following that repository and branch, directly or through a GitRepository', async () => {
    const res = await github(githubPush('refs/heads/main'));
    expect(res.status).toBe(202);
    const n = ns.name;
    const expected = [`${n}/matching`, `${n}/via-gitrepository`, `${n}/via-values-layer`];
    expect(await res.json()).toEqual({ matched: expected });
    expect(sent.map((s) => `${s.key.namespace}/${s.key.name}`)).toEqual(expected);
    for (const s of sent) {
      expect(s.loop).toBe('reconcile');
      expect(s.cause).toBe('git push refs/heads/main c0ffee0');
      expect(s.key.uid).toMatch(/^[0-9a-f-]{36}$/);
    }
    const matching = await convoyApi(admin).getRelease(n, 'matching');
    expect(sent[0]?.key.uid).toBe(matching.metadata.uid);
  });

  it('a push to another branch enqueues the Releases of that branch only', async () => {
    const res = await github(githubPush('refs/heads/dev'));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      matched: [`${ns.name}/other-branch`, `${ns.name}/via-gitrepository-dev`],
    });
  });

  it('a tag push enqueues the Releases on that tag', async () => {
    const res = await github(githubPush('refs/tags/v1.0.0'));
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ matched: [`${ns.name}/on-tag`] });
  });

  it('a GitLab push (X-Gitlab-Token) matches by the same rules', async () => {
    const body = JSON.stringify({
      object_kind: 'push',
      ref: 'refs/heads/main',
      after: SHA,
      project: {
        git_http_url: CLONE_URL,
        git_ssh_url: `git@git.example.invalid:org/${REPO}.git`,
        web_url: `https://git.example.invalid/org/${REPO}`,
      },
    });
    const res = await deliver(body, { 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Token': SECRET });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { matched: string[] }).matched).toEqual([
      `${ns.name}/matching`,
      `${ns.name}/via-gitrepository`,
      `${ns.name}/via-values-layer`,
    ]);
  });

  it('a Gitea push (X-Gitea-Signature) matches by the same rules', async () => {
    const body = githubPush('refs/heads/dev');
    const res = await deliver(body, {
      'X-Gitea-Event': 'push',
      'X-GitHub-Event': 'push',
      'X-Gitea-Signature': sign(body).slice('sha256='.length),
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      matched: [`${ns.name}/other-branch`, `${ns.name}/via-gitrepository-dev`],
    });
  });

  it('a push to a repository no Release follows → 202 with nothing matched', async () => {
    const body = githubPush('refs/heads/main').replaceAll(REPO, `${REPO}-nobody`);
    const res = await github(body);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ matched: [] });
    expect(sent).toEqual([]);
  });

  it('a bad signature → 401 with the error shape, nothing enqueued, neither secret nor signature echoed', async () => {
    const body = githubPush('refs/heads/main');
    const signature = sign(body, 'not-the-secret');
    const res = await github(body, signature);
    expect(res.status).toBe(401);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ error: 'Unauthorized', message: expect.any(String) as unknown });
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(signature.slice('sha256='.length));
    expect(sent).toEqual([]);
  });

  it('a tampered body → 401', async () => {
    const body = githubPush('refs/heads/main');
    const res = await deliver(body.replace('refs/heads/main', 'refs/heads/dev'), {
      'X-GitHub-Event': 'push',
      'X-Hub-Signature-256': sign(body),
    });
    expect(res.status).toBe(401);
    expect(sent).toEqual([]);
  });

  it('no signature → 401; a wrong GitLab token → 401', async () => {
    const body = githubPush('refs/heads/main');
    expect((await deliver(body, { 'X-GitHub-Event': 'push' })).status).toBe(401);
    expect((await deliver(body, { 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Token': 'guess' })).status).toBe(
      401,
    );
    expect(sent).toEqual([]);
  });

  it('a GitHub ping → 200 {pong}', async () => {
    const body = JSON.stringify({ zen: 'Design for failure.', hook_id: 7 });
    const res = await github(body, sign(body), 'ping');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ pong: true });
  });

  it('another event → 200 ignored', async () => {
    const body = JSON.stringify({ action: 'opened' });
    const res = await github(body, sign(body), 'pull_request');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ignored: 'pull_request' });
  });

  it('no provider event header → 400', async () => {
    const res = await deliver('{}', {});
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'InvalidRequest' });
  });

  it('a body over 1 MiB → 413', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main', padding: 'x'.repeat(1024 * 1024) });
    const res = await github(body);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'PayloadTooLarge' });
  });
});

// The webhook wired to real relays (leader and follower) sending to fauxqs: a webhook can reach any replica.
describe('POST /v1/hooks/git with Relay.enqueue', () => {
  let admin: KubeConfig;
  let ns: FreshNamespace;
  let server: FauxqsServer;
  let sqs: SQSClient;
  let queueUrls: Record<Loop, string>;
  const relays: Relay[] = [];
  const logLines: string[] = [];
  const repo = `webhook-relay-${randomBytes(4).toString('hex')}`;
  const repoUrl = `https://git.example.invalid/org/${repo}.git`;

  const startOne = (identity: string) => {
    const relay = startRelay({
      kube: fromClientNodeKubeConfig(admin),
      sqs,
      queueUrls,
      installationNamespace: ns.name,
      logger: createLogger({ write: (line) => logLines.push(line), base: { identity } }),
      leases: {
        acquire: () => Promise.reject(new Error('unused')),
        release: () => Promise.resolve(),
        removeAll: () => Promise.resolve(),
        releaseUids: () => Promise.resolve([]),
      },
      identity,
      timers: false,
      leaderElection: { leaseDurationMs: 3_000, renewIntervalMs: 500 },
    });
    relays.push(relay);
    return relay;
  };

  const until = async (what: string, check: () => boolean, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await sleep(50);
    }
  };

  /** Reconcile messages for Release `name` of this namespace whose cause starts with `cause`, waiting (bounded) until `count` arrived. */
  const reconcileMessages = async (
    name: string,
    cause: string,
    count = 1,
    timeoutMs = 10_000,
  ): Promise<QueueMessage[]> => {
    const found: QueueMessage[] = [];
    const deadline = Date.now() + timeoutMs;
    while (found.length < count && Date.now() < deadline) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrls.reconcile,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
        }),
      );
      for (const m of Messages) {
        const parsed = parseQueueMessage(m.Body ?? '');
        if (
          parsed.ok &&
          parsed.message.namespace === ns.name &&
          parsed.message.name === name &&
          parsed.message.cause.startsWith(cause)
        )
          found.push(parsed.message);
      }
      if (Messages.length > 0) {
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrls.reconcile,
            Entries: Messages.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! })),
          }),
        );
      } else await sleep(100);
    }
    return found;
  };

  const appFor = (relay: Relay) =>
    createApiApp({
      auth: createKubeAuthenticator(fromClientNodeKubeConfig(admin)),
      releases: createReleaseApi(fromClientNodeKubeConfig(admin)),
      metrics: relay.metrics,
      ready: () => relay.ready(),
      gitWebhook: createGitWebhookHandler({
        secret: SECRET,
        releases: createKubeWebhookReleaseSource(fromClientNodeKubeConfig(admin)),
        enqueue: (loop, key, cause) => relay.enqueue(loop, key, cause),
      }),
    });

  const push = (app: ReturnType<typeof createApiApp>, ref: string) => {
    const body = JSON.stringify({ ref, after: SHA, repository: { clone_url: repoUrl } });
    return app.request('/v1/hooks/git', {
      method: 'POST',
      body,
      headers: {
        'Content-Type': 'application/json',
        'X-GitHub-Event': 'push',
        'X-Hub-Signature-256': sign(body),
      },
    });
  };

  beforeAll(async () => {
    admin = kubeConfigFor(inject('kubeconfigPath'));
    ns = await freshNamespace(admin, 'git-webhook-relay');
    await convoyApi(admin).create(
      'Release',
      ns.name,
      'follows-main',
      releaseSpec({ source: { git: { url: repoUrl, ref: { branch: 'main' } } } }),
    );
    await convoyApi(admin).create(
      'Release',
      ns.name,
      'follows-dev',
      releaseSpec({ source: { git: { url: repoUrl, ref: { branch: 'dev' } } } }),
    );
    server = await startFauxqs({ port: 0, logger: false });
    sqs = new SQSClient({
      endpoint: `http://127.0.0.1:${server.port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const suffix = randomBytes(3).toString('hex');
    const urls: Partial<Record<Loop, string>> = {};
    for (const loop of LOOPS)
      urls[loop] = (
        await sqs.send(new CreateQueueCommand({ QueueName: `webhook-${suffix}-${loop}` }))
      ).QueueUrl!;
    queueUrls = urls as Record<Loop, string>;
  });

  afterAll(async () => {
    for (const relay of relays.reverse()) await relay.stop();
    sqs?.destroy();
    await server?.stop();
    await ns?.delete();
    const errors = logLines.filter((l) => l.includes('"level":"error"'));
    if (errors.length > 0) console.error(`relay logged errors:\n${errors.join('\n')}`);
  });

  it('through the leader and through a follower, a push to main sends one reconcile message for the Release on main', async () => {
    const leader = startOne('webhook-relay-a');
    await until('relay a leads and has listed', () => leader.leading() && leader.ready());
    const follower = startOne('webhook-relay-b');
    await until('relay b has read the Lease', () => follower.ready());
    expect(follower.leading()).toBe(false);
    // The leader's first list sends every Release; let that send go out, or the push would coalesce into it (first cause kept).
    expect(await reconcileMessages('follows-main', 'watch: Release added')).toHaveLength(1);

    for (const relay of [leader, follower]) {
      const res = await push(appFor(relay), 'refs/heads/main');
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ matched: [`${ns.name}/follows-main`] });
      const messages = await reconcileMessages('follows-main', 'git push');
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatchObject({
        loop: 'reconcile',
        namespace: ns.name,
        name: 'follows-main',
        cause: 'git push refs/heads/main c0ffee0',
      });
    }
  });
});
