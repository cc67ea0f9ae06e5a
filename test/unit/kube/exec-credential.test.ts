// Exec plugins run for real (small shell scripts); the clock is a parameter, so expiry is not timed.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execCredentialSource, parseExecCredential } from '../../../adapters/kube/exec-credential.ts';

const API = 'client.authentication.k8s.io/v1beta1';

describe('exec credential plugins', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'convoy-exec-credential-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A plugin that appends a line per run to `runs` and prints a token expiring at `expires`. */
  const plugin = async (name: string, expires: string | null) => {
    const path = join(dir, name);
    const expiry = expires === null ? '' : `,"expirationTimestamp":"${expires}"`;
    await writeFile(
      path,
      `#!/bin/sh\necho run >> "${path}.runs"\nprintf '{"apiVersion":"${API}","kind":"ExecCredential","status":{"token":"t-%s"${expiry}}}' $$\n`,
      { mode: 0o700 },
    );
    return {
      command: path,
      runs: async () => (await readFile(`${path}.runs`, 'utf8')).trim().split('\n').length,
    };
  };

  it('the credential is kept until its expirationTimestamp, then the plugin runs again', async () => {
    const p = await plugin('expiring', '2030-01-01T00:00:00Z');
    let now = Date.parse('2029-12-31T23:00:00Z');
    const source = execCredentialSource({ apiVersion: API, command: p.command }, 'u', process.env, () => now);
    const first = await source();
    expect(await source()).toBe(first);
    expect(await p.runs()).toBe(1);
    now = Date.parse('2030-01-01T00:00:01Z');
    const second = await source();
    expect(second.token).not.toBe(first.token);
    expect(await p.runs()).toBe(2);
  });

  it('without an expirationTimestamp the credential is kept for the whole process', async () => {
    const p = await plugin('forever', null);
    const source = execCredentialSource({ apiVersion: API, command: p.command }, 'u');
    await source();
    await source();
    expect(await p.runs()).toBe(1);
  });

  it('concurrent requests share one run of the plugin', async () => {
    const p = await plugin('concurrent', '2099-01-01T00:00:00Z');
    const source = execCredentialSource({ apiVersion: API, command: p.command }, 'u');
    const tokens = new Set(
      (await Promise.all(Array.from({ length: 8 }, () => source()))).map((c) => c.token),
    );
    expect(tokens.size).toBe(1);
    expect(await p.runs()).toBe(1);
  });

  it('a failed run is not cached: the next request runs the plugin again', async () => {
    const path = join(dir, 'flaky');
    await writeFile(
      path,
      `#!/bin/sh\nif [ -f "${path}.ok" ]; then echo '{"apiVersion":"${API}","kind":"ExecCredential","status":{"token":"x"}}'; else echo down >&2; exit 1; fi\n`,
      { mode: 0o700 },
    );
    const source = execCredentialSource({ apiVersion: API, command: path }, 'u');
    await expect(source()).rejects.toThrow(
      `the exec plugin ${path} of kubeconfig user u failed with exit code 1: down`,
    );
    await writeFile(`${path}.ok`, '');
    expect((await source()).token).toBe('x');
  });

  it('a missing command is a clear error naming the field', () => {
    expect(() => execCredentialSource({ apiVersion: API }, 'dev')).toThrow(
      'users[dev].user.exec.command is missing',
    );
  });

  it.each([
    ['not JSON', 'token abc', 'stdout is not JSON'],
    ['another kind', '{"apiVersion":"v1","kind":"Status"}', 'kind is not ExecCredential'],
    [
      'another apiVersion',
      '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}',
      'apiVersion is "client.authentication.k8s.io/v1", the kubeconfig asks for client.authentication.k8s.io/v1beta1',
    ],
    [
      'no token and no certificate',
      `{"apiVersion":"${API}","kind":"ExecCredential","status":{}}`,
      'status has neither a token nor a client certificate and key',
    ],
    [
      'a bad expirationTimestamp',
      `{"apiVersion":"${API}","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"soon"}}`,
      'status.expirationTimestamp is not an RFC 3339 time',
    ],
  ])('an ExecCredential with %s is refused without quoting it', (_name, stdout, message) => {
    expect(() => parseExecCredential(stdout, API)).toThrow(message);
  });

  it('a client certificate and key are a credential too', () => {
    const parsed = parseExecCredential(
      `{"apiVersion":"${API}","kind":"ExecCredential","status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}}`,
      API,
    );
    expect(parsed).toEqual({
      token: undefined,
      clientCertificateData: 'CERT',
      clientKeyData: 'KEY',
      expiresAt: undefined,
    });
  });
});
