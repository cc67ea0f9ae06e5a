// deploy/, checked by a server-side dry run (`kubectl apply --dry-run=server`) on the test
// kube-apiserver, which validates every object against the API's schemas (and the CRDs against
// apiextensions). The Helm chart charts/convoy: chart.test.ts.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createToolLocator, type Tools } from '../../adapters/tools/binaries.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');

describe('install manifests (deploy/)', () => {
  let tools: Tools;
  const kubeconfig = inject('kubeconfigPath');

  beforeAll(async () => {
    tools = await createToolLocator().locate();
  });

  const kubectlDryRun = async (file: string, namespace?: string) =>
    run(tools.kubectl, ['--kubeconfig', kubeconfig, 'apply', '--server-side', '--dry-run=server', '--force-conflicts', '-f', file, ...(namespace ? ['-n', namespace] : [])], {
      maxBuffer: 16 << 20,
    });

  it('deploy/ (CRDs, then the relay objects) is accepted by a server-side dry run', async () => {
    const { stdout: crds } = await kubectlDryRun(join(root, 'deploy', 'crds.yaml'));
    expect(crds.match(/customresourcedefinition/g)).toHaveLength(5);
    // A dry run creates no Namespace, so the namespaced objects need convoy-system to exist (kept: other tests may use it).
    await run(tools.kubectl, ['--kubeconfig', kubeconfig, 'create', 'namespace', 'convoy-system']).catch((error: unknown) => {
      if (!String(error).includes('AlreadyExists')) throw error;
    });
    const { stdout: applied } = await kubectlDryRun(join(root, 'deploy', 'convoy.yaml'));
    for (const object of ['namespace/convoy-system', 'serviceaccount/convoy-relay', 'configmap/convoy-relay-config', 'deployment.apps/convoy-relay', 'poddisruptionbudget.policy/convoy-relay', 'service/convoy-relay']) {
      expect(applied).toContain(`${object} serverside-applied (server dry run)`);
    }
  });
});
