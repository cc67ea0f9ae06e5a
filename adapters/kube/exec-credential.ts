/**
 * Credentials from a kubeconfig exec plugin (`users[].user.exec`, the kind `aws eks
 * update-kubeconfig`, `gke-gcloud-auth-plugin`, `kubelogin` or `tsh` write), run as kubectl runs
 * them: the command with its args, the process environment plus `exec.env`, and
 * KUBERNETES_EXEC_INFO. The ExecCredential it prints is kept until its expirationTimestamp (for
 * the whole process when it has none), and concurrent requests share one run of the plugin.
 *
 * Only for the user's own kubeconfig (the CLI, `convoy dev`): a kubeconfig stored in a Cluster's
 * Secret may never run a command (cluster-resolver refuses exec before loading it).
 *
 * Not client-node's ExecAuth: it rejects with the plugin's stderr alone (no command, no exit
 * code), starts one plugin per concurrent request until the first answers, and sets no
 * KUBERNETES_EXEC_INFO (docs/decisions.md).
 */
import { spawn } from 'node:child_process';
import { KubeconfigError } from './kubeconfig.ts';

/** `users[].user.exec` as the kubeconfig spells it. */
export interface ExecConfig {
  readonly apiVersion?: string;
  readonly command?: string;
  readonly args?: readonly string[] | null;
  readonly env?: readonly { name: string; value: string }[] | null;
  readonly installHint?: string;
  readonly interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
}

/** What a plugin gives: a bearer token and/or a client certificate (PEM). */
export interface ExecCredential {
  readonly token?: string | undefined;
  readonly clientCertificateData?: string | undefined;
  readonly clientKeyData?: string | undefined;
  /** Epoch ms after which the plugin runs again; undefined: never. */
  readonly expiresAt?: number | undefined;
}

/** The plugin could not run, failed, or printed no usable ExecCredential. Never holds a credential. */
export class ExecCredentialError extends KubeconfigError {
  override name = 'ExecCredentialError';
}

const MAX_STDERR = 400;

/**
 * A source of the plugin's current credential: runs it on the first call and again only once the
 * credential it printed has expired. `user` names the kubeconfig user in messages.
 */
export function execCredentialSource(
  exec: ExecConfig,
  user: string,
  env: NodeJS.ProcessEnv = process.env,
  now: () => number = Date.now,
): () => Promise<ExecCredential> {
  const command = exec.command;
  if (typeof command !== 'string' || command === '') {
    throw new ExecCredentialError(`users[${user}].user.exec.command is missing`);
  }
  const apiVersion = exec.apiVersion ?? 'client.authentication.k8s.io/v1beta1';
  let current: ExecCredential | undefined;
  let running: Promise<ExecCredential> | undefined;
  return () => {
    if (current !== undefined && (current.expiresAt === undefined || current.expiresAt > now()))
      return Promise.resolve(current);
    running ??= runPlugin(exec, command, apiVersion, user, env).then(
      (credential) => {
        current = credential;
        running = undefined;
        return credential;
      },
      (error: unknown) => {
        running = undefined;
        throw error;
      },
    );
    return running;
  };
}

function runPlugin(
  exec: ExecConfig,
  command: string,
  apiVersion: string,
  user: string,
  env: NodeJS.ProcessEnv,
): Promise<ExecCredential> {
  const what = `the exec plugin ${command} of kubeconfig user ${user}`;
  const interactive = exec.interactiveMode !== 'Never' && process.stdin.isTTY === true;
  const info = { apiVersion, kind: 'ExecCredential', spec: { interactive } };
  const childEnv: NodeJS.ProcessEnv = { ...env, KUBERNETES_EXEC_INFO: JSON.stringify(info) };
  for (const { name, value } of exec.env ?? []) childEnv[name] = value;
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...(exec.args ?? [])], {
      env: childEnv,
      stdio: [interactive ? 'inherit' : 'ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      const hint = exec.installHint ? ` (${oneLine(exec.installHint)})` : '';
      reject(
        new ExecCredentialError(
          error.code === 'ENOENT'
            ? `${what} was not found${hint}`
            : `${what} could not start: ${error.code ?? error.message}`,
        ),
      );
    });
    child.on('close', (code, signal) => {
      if (code !== 0) {
        const said = oneLine(stderr);
        const how = code === null ? `was killed by ${signal ?? 'a signal'}` : `failed with exit code ${code}`;
        reject(new ExecCredentialError(`${what} ${how}${said === '' ? '' : `: ${said}`}`));
        return;
      }
      try {
        resolve(parseExecCredential(stdout, apiVersion));
      } catch (error) {
        reject(
          new ExecCredentialError(`${what} printed no usable ExecCredential: ${(error as Error).message}`),
        );
      }
    });
  });
}

/** The ExecCredential printed on stdout; messages never quote it (it holds the credential). */
export function parseExecCredential(stdout: string, apiVersion: string): ExecCredential {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    throw new Error('stdout is not JSON');
  }
  const body = parsed as { apiVersion?: unknown; kind?: unknown; status?: Record<string, unknown> } | null;
  if (body === null || typeof body !== 'object' || body.kind !== 'ExecCredential')
    throw new Error('kind is not ExecCredential');
  if (body.apiVersion !== apiVersion)
    throw new Error(
      `apiVersion is ${JSON.stringify(body.apiVersion)}, the kubeconfig asks for ${apiVersion}`,
    );
  const status = body.status ?? {};
  const text = (field: string): string | undefined => {
    const value = status[field];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string') throw new Error(`status.${field} is not a string`);
    return value;
  };
  const token = text('token');
  const clientCertificateData = text('clientCertificateData');
  const clientKeyData = text('clientKeyData');
  if (token === undefined && (clientCertificateData === undefined || clientKeyData === undefined)) {
    throw new Error('status has neither a token nor a client certificate and key');
  }
  const expiration = text('expirationTimestamp');
  const expiresAt = expiration === undefined ? undefined : Date.parse(expiration);
  if (expiresAt !== undefined && Number.isNaN(expiresAt))
    throw new Error('status.expirationTimestamp is not an RFC 3339 time');
  return { token, clientCertificateData, clientKeyData, expiresAt };
}

function oneLine(text: string): string {
  const line = text.trim().replace(/\s*\n\s*/g, ' | ');
  return line.length > MAX_STDERR ? `${line.slice(0, MAX_STDERR)}…` : line;
}
