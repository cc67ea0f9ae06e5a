import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import {
  deployFiles,
  deployYaml,
  installFiles,
  PLACEHOLDER_QUEUE_URLS,
} from '../../../infra/install-files.ts';
import { relayManifests, type KubeManifest } from '../../../infra/relay-manifests.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();
}

const docs = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as KubeManifest | null)
    .filter((d): d is KubeManifest => d !== null);

describe('deploy/ and charts/convoy are generated from infra/relay-manifests.ts', () => {
  const generated = installFiles(version);

  it('every generated file is on disk with the same content (else: npm run gen:deploy)', () => {
    for (const [path, content] of generated) {
      expect(
        readFileSync(join(root, path), 'utf8'),
        `${path} drifted from its source; run npm run gen:deploy`,
      ).toBe(content);
    }
  });

  it('deploy/ and charts/convoy hold nothing that is not generated', () => {
    const onDisk = [...filesUnder('deploy'), ...filesUnder('charts/convoy')].sort();
    expect(onDisk).toEqual([...generated.keys()].sort());
  });

  it('deploy/ holds exactly relayManifests() with placeholder queue URLs, CRDs in their own file', () => {
    const files = deployFiles();
    const fromFiles = [
      ...docs(files.get('deploy/crds.yaml') ?? ''),
      ...docs(files.get('deploy/convoy.yaml') ?? ''),
    ];
    expect(fromFiles).toEqual(relayManifests({ queueUrls: PLACEHOLDER_QUEUE_URLS, region: 'us-east-1' }));
    expect(
      docs(files.get('deploy/crds.yaml') ?? '').every((m) => m.kind === 'CustomResourceDefinition'),
    ).toBe(true);
  });

  it('convoy install --print (deployYaml) without options is the same objects as deploy/', () => {
    const files = deployFiles();
    expect(docs(deployYaml())).toEqual([
      ...docs(files.get('deploy/crds.yaml') ?? ''),
      ...docs(files.get('deploy/convoy.yaml') ?? ''),
    ]);
  });

  it('the chart carries the CRDs and a template per kind, with Helm values for queues, image and replicas', () => {
    const crds = [...generated.keys()].filter((p) => p.startsWith('charts/convoy/crds/'));
    expect(crds).toHaveLength(
      relayManifests({ queueUrls: PLACEHOLDER_QUEUE_URLS, region: 'r' }).filter(
        (m) => m.kind === 'CustomResourceDefinition',
      ).length,
    );
    const deployment = generated.get('charts/convoy/templates/deployment.yaml') ?? '';
    expect(deployment).toContain('replicas: {{ .Values.replicas }}');
    expect(deployment).toContain('{{ required "image.repository: the relay image is not published; ');
    expect(generated.get('charts/convoy/templates/configmap.yaml')).toContain('.Values.queues.reconcile');
    expect(generated.has('charts/convoy/templates/namespace.yaml')).toBe(false);
  });
});
