// vitest globalSetup for the `integration` project: ONE control plane per test run.
import type { TestProject } from 'vitest/node';
import { installCrds, startControlPlane } from '../../dev/control-plane.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig (client certificate, system:masters); contexts 'alice' and 'bob' use tokens. */
    kubeconfigPath: string;
    /** https://127.0.0.1:<port> */
    server: string;
    /** Static bearer tokens of the unprivileged users 'alice' and 'bob'. */
    tokens: Record<string, string>;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cp = await startControlPlane({ extraUsers: [{ name: 'alice' }, { name: 'bob' }] });
  try {
    await installCrds(cp.kubeconfigPath);
  } catch (err) {
    await cp.stop();
    throw err;
  }
  project.provide('kubeconfigPath', cp.kubeconfigPath);
  project.provide('server', cp.server);
  project.provide('tokens', { ...cp.tokens });
  return () => cp.stop();
}
