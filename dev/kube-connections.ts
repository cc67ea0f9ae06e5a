// client-node API clients that share their connections, for `convoy dev` and the tests.
//
// client-node 2.0 gives every request a new undici Agent of its own: a new TCP + TLS connection
// per request, and with undici 8 that connection speaks HTTP/2 (allowH2 is on by default). A Go
// HTTP/2 server closes a new connection whose first frame it has not handled within 2 s (the
// `firstSettingsTimeout` of golang.org/x/net/http2, in kube-apiserver too), and undici fails the
// request with "other side closed" instead of retrying it: under a loaded soak a test's plain GET
// of a Release failed that way. Convoy's own transport (adapters/kube/http.ts) keeps HTTP/1.1
// keep-alive connections; these clients now do the same: one undici Agent per cluster, user and
// TLS credentials of the KubeConfig, HTTP/1.1, its connections reused.
import { createHash } from 'node:crypto';
import type { AgentOptions } from 'node:https';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import { Agent } from 'undici';

/** client-node's own per-request dispatcher factory (private in its typings, public in its code). */
interface DispatcherFactory {
  createDispatcher(cluster: Cluster | null, agentOptions: AgentOptions): unknown;
}

const pemOf = (value: unknown): string =>
  value === undefined ? '' : Buffer.isBuffer(value) ? value.toString('base64') : JSON.stringify(value);

/** Makes `kc`'s API clients reuse one HTTP/1.1 connection pool per cluster, user and TLS credentials; returns `kc`. */
export function withSharedConnections(kc: KubeConfig): KubeConfig {
  const own = kc as unknown as DispatcherFactory;
  const perRequest = own.createDispatcher.bind(kc);
  const pools = new Map<string, Agent>();
  own.createDispatcher = (cluster, agentOptions) => {
    const options = kc.createDispatcherOptions(cluster, agentOptions);
    // Proxies and plain HTTP keep client-node's own handling.
    if (options.type !== 'agent') return perRequest(cluster, agentOptions);
    // An exec plugin may hand out a new client certificate: a pool per set of credentials.
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          cluster?.name,
          cluster?.server,
          kc.getCurrentUser()?.name,
          agentOptions.servername,
          agentOptions.rejectUnauthorized,
        ]),
      )
      .update(pemOf(agentOptions.ca))
      .update(pemOf(agentOptions.cert))
      .update(pemOf(agentOptions.key))
      .digest('hex');
    let pool = pools.get(key);
    if (pool === undefined) {
      pool = new Agent({ connect: options.connect, allowH2: false });
      pools.set(key, pool);
    }
    return pool;
  };
  return kc;
}
