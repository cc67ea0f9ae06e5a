// Helpers for integration tests that talk to the shared control plane (see global-setup.ts).
import { randomBytes } from 'node:crypto';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { withSharedConnections } from '../../dev/kube-connections.ts';

/**
 * A client-node KubeConfig loaded from `path`; `context` picks e.g. a token user ('alice'). Its API
 * clients share HTTP/1.1 connections (dev/kube-connections.ts).
 */
export function kubeConfigFor(path: string, context?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  if (context !== undefined) kc.setCurrentContext(context);
  return withSharedConnections(kc);
}

export interface FreshNamespace {
  readonly name: string;
  /** Deletes the namespace (404 is fine). Suited to `afterAll(ns.delete)`. */
  readonly delete: () => Promise<void>;
}

/**
 * Creates a namespace named `<prefix>-<random>` so parallel test files never collide.
 * Deleting a namespace takes the namespace controller 5-10 s, so give each test its own rather
 * than waiting for a deletion.
 */
export async function freshNamespace(kc: KubeConfig, prefix: string): Promise<FreshNamespace> {
  const core = kc.makeApiClient(CoreV1Api);
  const base =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 50) || 'test';
  for (let attempt = 0; ; attempt++) {
    const name = `${base}-${randomBytes(4).toString('hex')}`;
    try {
      await core.createNamespace({
        body: { metadata: { name, labels: { 'convoy.test/namespace': 'true' } } },
      });
    } catch (err) {
      if (err instanceof ApiException && err.code === 409 && attempt < 3) continue;
      throw err;
    }
    return {
      name,
      delete: async () => {
        try {
          await core.deleteNamespace({ name });
        } catch (err) {
          if (err instanceof ApiException && err.code === 404) return;
          throw err;
        }
      },
    };
  }
}
