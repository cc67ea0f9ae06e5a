// deploy/, checked by a server-side dry run (`kubectl apply --dry-run=server`) on the test
// kube-apiserver, which validates every object against the API's schemas (and the CRDs against
// apiextensions). The Helm chart charts/convoy: chart.test.ts.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { createToolLocator, type Tools } from '../../adapters/tools/binaries.ts';
import { deployYaml } from '../../infra/install-files.ts';
import { RELAY_IMAGE_PLACEHOLDER } from '../../infra/relay-manifests.ts';
import { kinds } from '../../domain/api/kinds.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');

/**
 * Why the kubelet refuses an image before pulling anything: it parses every image with
 * distribution/reference's ParseNormalizedNamed (k8s.io/kubernetes pkg/util/parsers.ParseImageName;
 * the Pod then waits with reason InvalidImageName). The part before the first '/' is a registry host
 * when it holds '.' or ':', is `localhost` or has upper case; otherwise the image is on docker.io
 * (`library/<name>` without a '/'), and a repository name with upper case is refused.
 */
function kubeletRefusal(image: string): string | undefined {
  const slash = image.indexOf('/');
  const first = slash === -1 ? '' : image.slice(0, slash);
  const host = slash !== -1 && (/[.:]/.test(first) || first === 'localhost' || first.toLowerCase() !== first);
  const remainder = host ? image.slice(slash + 1) : slash === -1 ? `library/${image}` : image;
  const repository = remainder.split('@')[0]?.split(':')[0] ?? '';
  return repository.toLowerCase() === repository
    ? undefined
    : `invalid reference format: repository name (${repository}) must be lowercase`;
}

interface Deployment {
  kind: string;
  metadata: { name: string; namespace: string };
  spec: { template: { spec: { containers: { name: string; image: string }[] } } };
}

describe('install manifests (deploy/)', () => {
  let tools: Tools;
  const kubeconfig = inject('kubeconfigPath');

  beforeAll(async () => {
    tools = await createToolLocator().locate();
  });

  const kubectlDryRun = async (file: string, namespace?: string) =>
    run(
      tools.kubectl,
      [
        '--kubeconfig',
        kubeconfig,
        'apply',
        '--server-side',
        '--dry-run=server',
        '--force-conflicts',
        '-f',
        file,
        ...(namespace ? ['-n', namespace] : []),
      ],
      {
        maxBuffer: 16 << 20,
      },
    );

  it('deploy/ (CRDs, then the relay objects) is accepted by a server-side dry run', async () => {
    const { stdout: crds } = await kubectlDryRun(join(root, 'deploy', 'crds.yaml'));
    expect(crds.match(/customresourcedefinition/g)).toHaveLength(kinds.length); // one CRD per convoy kind
    // A dry run creates no Namespace, so the namespaced objects need convoy-system to exist (kept: other tests may use it).
    await run(tools.kubectl, ['--kubeconfig', kubeconfig, 'create', 'namespace', 'convoy-system']).catch(
      (error: unknown) => {
        if (!String(error).includes('AlreadyExists')) throw error;
      },
    );
    const { stdout: applied } = await kubectlDryRun(join(root, 'deploy', 'convoy.yaml'));
    for (const object of [
      'namespace/convoy-system',
      'serviceaccount/convoy-relay',
      'configmap/convoy-relay-config',
      'deployment.apps/convoy-relay',
      'poddisruptionbudget.policy/convoy-relay',
      'service/convoy-relay',
    ]) {
      expect(applied).toContain(`${object} serverside-applied (server dry run)`);
    }
  });

  it('deploy/ names no image anyone could pull (the relay image is not published): a placeholder the kubelet refuses at once, and its header says how to set the real one', async () => {
    const text = await readFile(join(root, 'deploy', 'convoy.yaml'), 'utf8');
    const deployment = parseAllDocuments(text)
      .map((d) => d.toJS() as Deployment | null)
      .find((d) => d?.kind === 'Deployment');
    const container = deployment?.spec.template.spec.containers[0];
    expect(container?.image).toBe(RELAY_IMAGE_PLACEHOLDER);
    expect(kubeletRefusal(RELAY_IMAGE_PLACEHOLDER)).toBe(
      `invalid reference format: repository name (library/${RELAY_IMAGE_PLACEHOLDER}) must be lowercase`,
    );
    // What the placeholder replaced would have been pulled from Docker Hub; a real URI parses.
    expect(kubeletRefusal('convoy-relay:0.1.0')).toBeUndefined();
    expect(kubeletRefusal('111111111111.dkr.ecr.eu-west-1.amazonaws.com/convoy-relay:0.1.0')).toBeUndefined();
    expect(text).toContain(
      '# The relay image is not published: build it (npm run image, or docker build -f image/Dockerfile .)',
    );
    expect(text).toContain('convoy install --print --image <registry>/convoy-relay:<tag>');

    // The header's kubectl set image names the right object and container: run it (locally) with the real kubectl.
    const command =
      /^# {3}(kubectl -n \S+ set image deployment\/\S+ \S+=)<registry>\/convoy-relay:<tag>$/m.exec(text)?.[1];
    expect(command).toBe(
      `kubectl -n ${deployment?.metadata.namespace} set image deployment/${deployment?.metadata.name} ${container?.name}=`,
    );
    const dir = await mkdtemp(join(tmpdir(), 'convoy-deploy-'));
    try {
      await writeFile(join(dir, 'deployment.yaml'), stringify(deployment));
      const image = 'registry.example/convoy-relay:0.1.0';
      const args = (command ?? '').split(' ').slice(1);
      const setArgs = [...args.slice(0, -1), `${args.at(-1) ?? ''}${image}`];
      const { stdout } = await run(tools.kubectl, [
        ...setArgs.filter((a) => !a.startsWith('deployment/')),
        '--local',
        '-f',
        join(dir, 'deployment.yaml'),
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      ]);
      expect(stdout).toBe(image);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    // convoy install --print --image puts the image there instead (the same objects as deploy/).
    expect(deployYaml({ image: 'registry.example/convoy-relay:0.1.0' })).not.toContain(
      RELAY_IMAGE_PLACEHOLDER,
    );
  });
});
