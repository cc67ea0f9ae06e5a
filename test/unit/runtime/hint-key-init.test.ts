/**
 * Where a function container gets its hint key (functions/runtime/clients.ts, config.ts): the
 * construct's secret read once at init (CONVOY_HINT_KEY_SECRET_ARN), else CONVOY_HINT_KEY, else
 * one drawn for the container. A variable set but empty, both set, or a secret that cannot be
 * read fail the init in one line naming the variable, never the key.
 */
import { describe, expect, it } from 'vitest';
import type { FetchLike } from '../../../adapters/aws/eks-token.ts';
import type { QueueMessage } from '../../../domain/runtime/queue-message.ts';
import { hintKey, hintProblem, sealHint, type HintKey } from '../../../functions/runtime/applied-hint.ts';
import { createFunctionClients, hintKeyOnAws } from '../../../functions/runtime/clients.ts';
import { ConfigError, loadFunctionConfig } from '../../../functions/runtime/config.ts';

const ARN = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:ConvoyHintKey-AbCdEf';
const VALUE = 'generated-by-secrets-manager-0123456789';
const base = {
  CONVOY_RECONCILE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/111111111111/r',
  CONVOY_DRIFT_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/111111111111/d',
  CONVOY_HEALTH_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/111111111111/h',
  AWS_REGION: 'eu-west-1',
};
const credentials = () => Promise.resolve({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' });

/** Secrets Manager as a fake: answers GetSecretValue for ARN with `answer`, recording each request. */
function secretsManager(
  answer: { status: number; body: unknown } | Error = { status: 200, body: { SecretString: VALUE } },
) {
  const requests: { url: string; target: string | undefined; body: string | undefined }[] = [];
  const fetch: FetchLike = (url, init) => {
    requests.push({ url, target: init.headers['x-amz-target'], body: init.body });
    if (answer instanceof Error) return Promise.reject(answer);
    return Promise.resolve({
      status: answer.status,
      text: () => Promise.resolve(JSON.stringify(answer.body)),
    });
  };
  return { fetch, requests };
}

const hint = {
  renderRef: 'sha256:x',
  release: {
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: { name: 'app', namespace: 'team', uid: 'u1' },
    spec: {
      cluster: { name: 'local' },
      source: { git: { url: 'https://git.example/app.git', ref: { branch: 'main' } } },
    },
  },
  live: [],
};
const at = new Date('2026-01-01T00:01:00Z');
const message = (applied: QueueMessage['applied']): QueueMessage => ({
  v: 1,
  loop: 'drift',
  namespace: 'team',
  name: 'app',
  uid: 'u1',
  cause: 'applied',
  sentAt: at.toISOString(),
  applied,
});
/** Whether a hint `sealer` sealed verifies under `checker`: the two are one installation's key. */
const shared = (sealer: HintKey, checker: HintKey) =>
  hintProblem(checker, message(sealHint(sealer, hint, at)), 1, at) === undefined;

describe("a container's hint key", () => {
  it("CONVOY_HINT_KEY_SECRET_ARN: the secret is read once at init, and every container reading it holds the installation's key", async () => {
    const sm = secretsManager();
    const config = loadFunctionConfig({ ...base, CONVOY_HINT_KEY_SECRET_ARN: ARN });
    const reconcile = await hintKeyOnAws(config, credentials, sm.fetch);
    const drift = await hintKeyOnAws(config, credentials, sm.fetch);
    expect(shared(reconcile, drift)).toBe(true);
    expect(shared(reconcile, hintKey(VALUE))).toBe(true);
    expect(sm.requests).toEqual([
      {
        url: 'https://secretsmanager.eu-west-1.amazonaws.com/',
        target: 'secretsmanager.GetSecretValue',
        body: JSON.stringify({ SecretId: ARN }),
      },
      {
        url: 'https://secretsmanager.eu-west-1.amazonaws.com/',
        target: 'secretsmanager.GetSecretValue',
        body: JSON.stringify({ SecretId: ARN }),
      },
    ]);
  });

  it('CONVOY_HINT_KEY: the text is the key, no request; neither: each container draws its own', async () => {
    const sm = secretsManager();
    const configured = loadFunctionConfig({ ...base, CONVOY_HINT_KEY: VALUE });
    expect(shared(await hintKeyOnAws(configured, credentials, sm.fetch), hintKey(VALUE))).toBe(true);
    const none = loadFunctionConfig(base);
    expect(
      shared(
        await hintKeyOnAws(none, credentials, sm.fetch),
        await hintKeyOnAws(none, credentials, sm.fetch),
      ),
    ).toBe(false);
    expect(sm.requests).toEqual([]);
  });

  it('the clients of one process carry one key, which its three loops share (convoy dev, tests)', () => {
    const clients = createFunctionClients(
      loadFunctionConfig({
        ...base,
        CONVOY_KUBECONFIG:
          'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://k.example"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
      }),
    );
    expect(shared(clients.hintKey, clients.hintKey)).toBe(true);
    clients.sqs.destroy();
  });

  it.each([
    ['CONVOY_HINT_KEY', { CONVOY_HINT_KEY: '' }],
    ['CONVOY_HINT_KEY_SECRET_ARN', { CONVOY_HINT_KEY_SECRET_ARN: '' }],
  ])('%s set but empty: the config fails at init in one line naming it', (name, env) => {
    expect(() => loadFunctionConfig({ ...base, ...env })).toThrow(ConfigError);
    expect(() => loadFunctionConfig({ ...base, ...env })).toThrow(
      new RegExp(`^function environment is invalid: ${name}: set but empty[^\\n]*$`),
    );
  });

  it('both set: the init fails naming both', async () => {
    const config = loadFunctionConfig({ ...base, CONVOY_HINT_KEY: VALUE, CONVOY_HINT_KEY_SECRET_ARN: ARN });
    await expect(hintKeyOnAws(config, credentials, secretsManager().fetch)).rejects.toThrow(
      /^CONVOY_HINT_KEY and CONVOY_HINT_KEY_SECRET_ARN are both set/,
    );
  });

  it.each([
    [
      'refused (AccessDenied)',
      { status: 400, body: { __type: 'com.amazonaws.secretsmanager#AccessDeniedException' } },
      /CONVOY_HINT_KEY_SECRET_ARN: the hint key could not be read \(reading secret arn:aws:secretsmanager:\S+ from Secrets Manager failed: HTTP 400 AccessDeniedException\)/,
    ],
    [
      'unreachable (no route to Secrets Manager)',
      new TypeError('fetch failed'),
      /CONVOY_HINT_KEY_SECRET_ARN: the hint key could not be read \(reading secret arn:aws:secretsmanager:\S+ failed: fetch failed\)/,
    ],
    [
      'empty',
      { status: 200, body: { SecretString: '' } },
      /CONVOY_HINT_KEY_SECRET_ARN: the secret arn:aws:secretsmanager:\S+ holds an empty string/,
    ],
  ] as const)(
    'a secret that is %s fails the init in one line naming the variable and the secret',
    async (_name, answer, message) => {
      const config = loadFunctionConfig({ ...base, CONVOY_HINT_KEY_SECRET_ARN: ARN });
      const init = hintKeyOnAws(config, credentials, secretsManager(answer).fetch);
      await expect(init).rejects.toThrow(ConfigError);
      await expect(init).rejects.toThrow(message);
      await expect(init).rejects.not.toThrow(/\n/);
    },
  );
});
