// vitest globalSetup for the `integration` project: ONE control plane per test run, with the
// real kube-controller-manager and kube-scheduler and KWOK's simulated nodes (started once here,
// not per test file): Deployments, Jobs… reach their real states by themselves. A Pod labelled
// `kwok.convoy.dev/fail: "true"` fails (see dev/control-plane/kwok-fail-stages.yaml).
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
    /** The simulated Nodes Pods are scheduled on. */
    nodeNames: string[];
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
  project.provide('nodeNames', [...cp.nodeNames]);
  process.stderr.write(
    `control plane: apiserver ready in ${cp.startupMs} ms, controllers and ${cp.nodeNames.length} nodes ready ${cp.clusterReadyMs} ms later (${cp.dir})\n`,
  );
  return () => cp.stop();
}
