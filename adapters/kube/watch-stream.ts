/**
 * A Kubernetes watch (`?watch=1`) read as it streams: one callback per event line
 * ({type, object}), over the same connection settings and credentials as http.ts. Used by
 * `convoy get -w`. Ends when the server closes the watch (its timeout), when `signal` aborts, or
 * with an error: KubeApiError for a refusal (a 410 Gone means: list again), KubeTransportError
 * when no answer came.
 */
import { request as httpsRequest } from 'node:https';
import { nodeHttp } from '../node-http.ts';
import { KubeApiError, KubeTransportError } from './http.ts';
import type { KubeClientConfig } from './kubeconfig.ts';

export interface WatchEvent<T = Record<string, unknown>> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface WatchRequest {
  /** The collection, e.g. `/apis/convoy.dev/v1alpha1/namespaces/a/releases`. */
  path: string;
  resourceVersion?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Asks the server to end the watch after this long (it then resumes from the last resourceVersion). */
  timeoutSeconds?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Accept header; default application/json (e.g. PartialObjectMetadata for metadata only). */
  accept?: string | undefined;
  /** Default convoy-cli. */
  userAgent?: string | undefined;
}

/** Streams the watch; resolves when it ends normally (server timeout or abort). */
export async function watchStream(
  config: KubeClientConfig,
  req: WatchRequest,
  onEvent: (event: WatchEvent) => void,
): Promise<void> {
  const base = new URL(config.server);
  const query = new URLSearchParams({ watch: '1', allowWatchBookmarks: 'true' });
  if (req.resourceVersion !== undefined) query.set('resourceVersion', req.resourceVersion);
  if (req.labelSelector !== undefined) query.set('labelSelector', req.labelSelector);
  if (req.fieldSelector !== undefined) query.set('fieldSelector', req.fieldSelector);
  if (req.timeoutSeconds !== undefined) query.set('timeoutSeconds', String(req.timeoutSeconds));
  const headers: Record<string, string> = {
    Accept: req.accept ?? 'application/json',
    'User-Agent': req.userAgent ?? 'convoy-cli',
  };
  const token = config.tokenSource !== undefined ? await config.tokenSource() : config.bearerToken();
  if (token !== undefined && token !== '') headers.Authorization = `Bearer ${token}`;
  else if (config.username !== undefined && config.password !== undefined) {
    headers.Authorization = `Basic ${Buffer.from(`${config.username}:${config.password}`).toString('base64')}`;
  }
  if (config.impersonate !== undefined) headers['Impersonate-User'] = config.impersonate;
  const send = base.protocol === 'http:' ? nodeHttp.request : httpsRequest;
  const path = `${base.pathname.replace(/\/+$/, '')}${req.path}?${query.toString()}`;

  await new Promise<void>((resolve, reject) => {
    if (req.signal?.aborted) {
      resolve();
      return;
    }
    const request = send({
      protocol: base.protocol,
      hostname: base.hostname.replace(/^\[|\]$/g, ''),
      port: base.port,
      path,
      method: 'GET',
      headers,
      ...(base.protocol === 'https:' ? { agent: config.agent } : {}),
    });
    const onAbort = () => request.destroy();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (error?: Error) => {
      req.signal?.removeEventListener('abort', onAbort);
      if (error === undefined || req.signal?.aborted) resolve();
      else reject(error);
    };
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish(
        new KubeTransportError(
          `GET ${req.path} (watch) on ${config.server} failed: ${error.code ?? error.message}`,
          error.code ?? error.message,
          { cause: error },
        ),
      ),
    );
    request.on('response', (res) => {
      const status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      if (status < 200 || status > 299) {
        let text = '';
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text) as unknown;
          } catch {
            // not JSON: the text is the message
          }
          const message = (body as { message?: unknown } | undefined)?.message;
          finish(
            new KubeApiError(
              `GET ${req.path} (watch): HTTP ${status}${typeof message === 'string' ? `: ${message}` : ''}`,
              { status, headers: res.headers, body },
            ),
          );
        });
        return;
      }
      let buffered = '';
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let newline = buffered.indexOf('\n');
        while (newline >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          newline = buffered.indexOf('\n');
          if (line === '') continue;
          try {
            onEvent(JSON.parse(line) as WatchEvent);
          } catch (error) {
            res.destroy();
            finish(error instanceof Error ? error : new Error(String(error)));
            return;
          }
        }
      });
      res.on('end', () => finish());
      res.on('error', (error) =>
        finish(
          new KubeTransportError(
            `GET ${req.path} (watch) on ${config.server} broke off: ${error.message}`,
            error.message,
            { cause: error },
          ),
        ),
      );
    });
    request.end();
  });
}
