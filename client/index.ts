/**
 * `convoy/client`: a small read client for convoy's objects on the management cluster.
 *
 *   import { createConvoyClient } from 'convoy/client';
 *   const convoy = createConvoyClient({ kubeconfigPath: process.env.KUBECONFIG });
 *   const verdict = await convoy.verdict('team-a', 'web');   // { ready, kind, signal, message }
 *
 * It talks to the apiserver through convoy's own small HTTPS client (adapters/kube/http.ts);
 * the credentials are the kubeconfig's (or the Pod's ServiceAccount in a cluster).
 */
import {
  fromKubeconfigFile,
  fromKubeconfigYaml,
  inClusterConfig,
  type KubeClientConfig,
} from '../adapters/kube/kubeconfig.ts';
import { parseRelease } from '../domain/api/objects.ts';
import type { Release } from '../domain/api/index.ts';
import { combinedVerdict, type Verdict } from '../domain/status/verdict.ts';
import { createReleaseSource } from '../adapters/kube/release-source.ts';

export type { Release, Verdict, KubeClientConfig };

export interface ConvoyClientOptions {
  /** A kubeconfig file; else kubeconfigYaml; else the in-cluster ServiceAccount. */
  readonly kubeconfigPath?: string;
  readonly kubeconfigYaml?: string;
  readonly context?: string;
}

export interface ConvoyClient {
  /** The Release, validated against convoy's schema; undefined when it does not exist. */
  release(namespace: string, name: string): Promise<Release | undefined>;
  /** Ready, waiting or failed, from the Release's conditions (what `convoy status` prints). */
  verdict(namespace: string, name: string): Promise<Verdict>;
}

export class ConvoyClientError extends Error {
  override name = 'ConvoyClientError';
}

function configOf(options: ConvoyClientOptions): KubeClientConfig {
  const context = options.context === undefined ? {} : { context: options.context };
  if (options.kubeconfigPath !== undefined) return fromKubeconfigFile(options.kubeconfigPath, context);
  if (options.kubeconfigYaml !== undefined) return fromKubeconfigYaml(options.kubeconfigYaml, context);
  return inClusterConfig();
}

export function createConvoyClient(options: ConvoyClientOptions = {}): ConvoyClient {
  const source = createReleaseSource(configOf(options));
  const release = async (namespace: string, name: string): Promise<Release | undefined> => {
    const raw = await source.get(namespace, name);
    if (raw === undefined) return undefined;
    const parsed = parseRelease(raw);
    if (!parsed.ok)
      throw new ConvoyClientError(`Release ${namespace}/${name} does not parse: ${parsed.error}`);
    return parsed.value;
  };
  return {
    release,
    async verdict(namespace, name) {
      const found = await release(namespace, name);
      if (found === undefined) throw new ConvoyClientError(`Release ${namespace}/${name} does not exist`);
      return combinedVerdict(found);
    },
  };
}
