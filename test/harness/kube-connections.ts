// The test harness's @kubernetes/client-node clients share their connections.
//
// client-node 2.0 gives every request a new undici Agent of its own: a new TCP + TLS connection
// per request, and with undici 8 that connection speaks HTTP/2 (allowH2 is on by default). A Go
// HTTP/2 server closes a new connection whose first frame it has not handled within 2 s (the
// `firstSettingsTimeout` of golang.org/x/net/http2, in kube-apiserver too), and undici fails the
// request with "other side closed" instead of retrying it: under a loaded soak a test's plain GET
// of a Release failed that way (cli-get-rollback, soak run 1 at 58ade70). Convoy's own transport
// (adapters/kube/http.ts) keeps HTTP/1.1 keep-alive connections; the tests' reads now do the same:
// one undici Agent per cluster and user of the KubeConfig, HTTP/1.1, connections reused.
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import type { AgentOptions } from 'node:https';
import { Agent } from 'undici';

/** client-node's own per-request dispatcher factory (private in its typings, public in its code). */
interface DispatcherFactory {
  createDispatcher(cluster: Cluster | null, agentOptions: AgentOptions): unknown;
}

/** Makes `kc`'s API clients reuse one HTTP/1.1 connection pool per cluster and user; returns `kc`. */
export function withSharedConnections(kc: KubeConfig): KubeConfig {
  const own = kc as unknown as DispatcherFactory;
  const perRequest = own.createDispatcher.bind(kc);
  const pools = new Map<string, Agent>();
  own.createDispatcher = (cluster, agentOptions) => {
    const options = kc.createDispatcherOptions(cluster, agentOptions);
    // Proxies and plain HTTP keep client-node's own handling.
    if (options.type !== 'agent') return perRequest(cluster, agentOptions);
    const key = JSON.stringify([cluster?.name ?? '', cluster?.server ?? '', kc.getCurrentUser()?.name ?? '']);
    let pool = pools.get(key);
    if (pool === undefined) {
      pool = new Agent({ connect: options.connect, allowH2: false });
      pools.set(key, pool);
    }
    return pool;
  };
  return kc;
}
