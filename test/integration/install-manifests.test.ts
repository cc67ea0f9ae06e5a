// deploy/ and the Helm chart charts/convoy, checked by the real tools: `helm lint`, `helm template`,
// and a server-side dry run (`kubectl apply --dry-run=server`) on the test kube-apiserver, which
// validates every object against the API's schemas (and the CRDs against apiextensions).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { createToolLocator, type Tools } from '../../adapters/tools/binaries.ts';
import { PLACEHOLDER_QUEUE_URLS } from '../../infra/install-files.ts';
import { relayManifests } from '../../infra/relay-manifests.ts';
import { kubeConfigFor, freshNamespace, type FreshNamespace } from '../harness/kube.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const chart = join(root, 'charts', 'convoy');
const queues = [
  'queues.reconcile=https://sqs.eu-west-1.amazonaws.com/111111111111/convoy-reconcile',
  'queues.drift=https://sqs.eu-west-1.amazonaws.com/111111111111/convoy-drift',
  'queues.health=https://sqs.eu-west-1.amazonaws.com/111111111111/convoy-health',
].join(',');
/** The relay image is not published: the chart has no default and must be told where the user pushed it. */
const IMAGE = '111111111111.dkr.ecr.eu-west-1.amazonaws.com/convoy-relay';
const values = `${queues},image.repository=${IMAGE}`;

describe('install manifests and Helm chart', () => {
  let tools: Tools;
  let ns: FreshNamespace;
  let dir: string;
  const kubeconfig = inject('kubeconfigPath');

  beforeAll(async () => {
    tools = await createToolLocator().locate();
    ns = await freshNamespace(kubeConfigFor(kubeconfig), 'install');
    dir = await mkdtemp(join(tmpdir(), 'convoy-install-'));
  });
  afterAll(async () => {
    await ns?.delete();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectlDryRun = async (file: string, namespace?: string) =>
    run(tools.kubectl, ['--kubeconfig', kubeconfig, 'apply', '--server-side', '--dry-run=server', '--force-conflicts', '-f', file, ...(namespace ? ['-n', namespace] : [])], {
      maxBuffer: 16 << 20,
    });

  it('helm lint passes', async () => {
    const { stdout } = await run(tools.helm, ['lint', chart, '--set', values]);
    expect(stdout).toContain('0 chart(s) failed');
  });

  it('helm template renders every object (CRDs included); the API server accepts them in a dry run', async () => {
    const { stdout } = await run(tools.helm, ['template', 'convoy', chart, '-n', ns.name, '--include-crds', '--set', `${values},renderBucket=renders,settings.EXTRA_SETTING=on`], {
      maxBuffer: 16 << 20,
    });
    const docs = parseAllDocuments(stdout).map((d) => d.toJS() as { kind: string; metadata: { namespace?: string }; data?: Record<string, string> } | null).filter((d) => d !== null);
    // Every object of relayManifests() but the Namespace (helm install --create-namespace makes it).
    const expected = relayManifests({ queueUrls: PLACEHOLDER_QUEUE_URLS, region: 'r' }).filter((m) => m.kind !== 'Namespace');
    expect(docs.map((d) => d.kind).sort()).toEqual(expected.map((m) => m.kind).sort());
    const config = docs.find((d) => d.kind === 'ConfigMap');
    expect(config?.metadata.namespace).toBe(ns.name);
    expect(config?.data).toMatchObject({ CONVOY_NAMESPACE: ns.name, CONVOY_RENDER_BUCKET: 'renders', EXTRA_SETTING: 'on', AWS_REGION: 'us-east-1' });
    const file = join(dir, 'chart.yaml');
    await writeFile(file, stdout);
    const { stdout: applied } = await kubectlDryRun(file);
    expect(applied).toMatch(/deployment\.apps\/convoy-relay serverside-applied \(server dry run\)/);
    expect(applied).toMatch(/networkpolicy\.networking\.k8s\.io\/convoy-relay serverside-applied/);
  });

  it('helm template refuses a chart without image.repository, saying how to build and push the image', async () => {
    const refused = run(tools.helm, ['template', 'convoy', chart, '--set', queues]);
    await expect(refused).rejects.toThrow(
      /image\.repository: the relay image is not published; build it \(npm run image, or docker build -f image\/Dockerfile\) and push it to a registry of yours/,
    );
  });

  it('with image.repository set, the relay runs that image at the chart appVersion unless image.tag says otherwise', async () => {
    const image = async (extra: string) => {
      const { stdout } = await run(tools.helm, ['template', 'convoy', chart, '--set', `${values}${extra}`, '--show-only', 'templates/deployment.yaml']);
      return (parseAllDocuments(stdout)[0]?.toJS() as { spec: { template: { spec: { containers: { image: string }[] } } } }).spec.template.spec.containers[0]?.image;
    };
    const { appVersion } = parse(await readFile(join(chart, 'Chart.yaml'), 'utf8')) as { appVersion: string };
    expect(await image('')).toBe(`${IMAGE}:${appVersion}`);
    expect(await image(',image.tag=abc123')).toBe(`${IMAGE}:abc123`);
  });

  it('helm template refuses a chart without queue URLs, naming the value', async () => {
    await expect(run(tools.helm, ['template', 'convoy', chart, '--set', `image.repository=${IMAGE}`])).rejects.toThrow(/queues\.reconcile: the URL of the reconcile SQS queue is required/);
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
