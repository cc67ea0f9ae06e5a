import { ApiException, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';

const git = { url: 'https://git.example.invalid/apps.git', ref: { branch: 'main' } };

/** Each row: an invalid Release spec, and what the apiserver's message must name. */
const invalid: { name: string; spec: Record<string, unknown>; field: string; reason: RegExp }[] = [
  {
    name: 'two sources at once',
    spec: releaseSpec({
      source: { git, helm: { repository: 'https://charts.example', chart: 'x', version: '1.0.0' } },
    }),
    field: 'spec.source',
    reason: /exactly one of git, gitRepositoryRef, helm, oci must be set/,
  },
  {
    name: 'a ref with both branch and tag',
    spec: releaseSpec({ source: { git: { ...git, ref: { branch: 'main', tag: 'v1' } } } }),
    field: 'spec.source.git.ref',
    reason: /exactly one of branch, tag, commit, semver must be set/,
  },
  {
    name: 'a negative interval',
    spec: releaseSpec({ syncPolicy: { interval: '-5m' } }),
    field: 'spec.syncPolicy.interval',
    reason: /should match/,
  },
  {
    name: 'an unknown content type',
    spec: releaseSpec({ content: { type: 'Ytt' } }),
    field: 'spec.content.type',
    reason: /Unsupported value: "Ytt"/,
  },
  {
    name: 'a source path containing ".."',
    spec: releaseSpec({ source: { git: { ...git, path: 'apps/../../etc' } } }),
    field: 'spec.source.git.path',
    reason: /must be a relative path without '\.\.' segments/,
  },
  {
    name: 'an absolute source path',
    spec: releaseSpec({ source: { git: { ...git, path: '/etc' } } }),
    field: 'spec.source.git.path',
    reason: /must be a relative path/,
  },
  {
    name: 'helm options with content type Manifests',
    spec: releaseSpec({ content: { type: 'Manifests', helm: { releaseName: 'x' } } }),
    field: 'spec.content',
    reason: /helm is only allowed with type Helm/,
  },
  {
    name: 'a GitRepository values layer without path',
    spec: releaseSpec({
      content: { type: 'Helm', helm: { valuesFrom: [{ kind: 'GitRepository', name: 'platform' }] } },
    }),
    field: 'spec.content.helm.valuesFrom[0]',
    reason: /path is required when kind is GitRepository/,
  },
  {
    name: 'a retry factor below 1',
    spec: releaseSpec({ syncPolicy: { retryBackoff: { initial: '5s', factor: 0.5 } } }),
    field: 'spec.syncPolicy.retryBackoff.factor',
    reason: /should be greater than or equal to 1/,
  },
  {
    name: 'a health check on Secrets (their data is never read)',
    spec: releaseSpec({
      healthAssessment: {
        checks: [{ apiVersion: 'v1', kind: 'Secret', healthy: "object.data.password == 'x'" }],
      },
    }),
    field: 'spec.healthAssessment.checks[0]',
    reason: /checks on Secrets are not allowed/,
  },
  {
    name: 'a health check expression longer than 4096 characters',
    spec: releaseSpec({
      healthAssessment: {
        checks: [{ apiVersion: 'v1', kind: 'ConfigMap', healthy: `${'true || '.repeat(600)}true` }],
      },
    }),
    field: 'spec.healthAssessment.checks[0].healthy',
    reason: /Too long: may not be (longer|more) than 4096/,
  },
];

describe('admission of invalid Releases (CRD schema + CEL)', () => {
  let kc: KubeConfig;
  let ns: FreshNamespace;
  beforeAll(async () => {
    kc = kubeConfigFor(inject('kubeconfigPath'));
    ns = await freshNamespace(kc, 'admission');
  });
  afterAll(() => ns.delete());

  for (const row of invalid) {
    it(`refuses ${row.name}, naming ${row.field}`, async () => {
      const error = await convoyApi(kc)
        .create('Release', ns.name, 'invalid', row.spec)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(ApiException);
      const body = JSON.parse((error as ApiException<string>).body) as { code: number; message: string };
      expect(body.code).toBe(422);
      expect(body.message).toContain(row.field);
      expect(body.message).toMatch(row.reason);
    });
  }

  it('accepts a valid Release and fills the defaults', async () => {
    await convoyApi(kc).create('Release', ns.name, 'valid', releaseSpec());
    const release = await convoyApi(kc).getRelease(ns.name, 'valid');
    expect(release.spec.syncPolicy).toMatchObject({
      mode: 'Automatic',
      interval: '5m',
      prune: true,
      waveTimeout: '5m',
    });
    expect(release.spec.content.type).toBe('Manifests');
    expect(release.spec.driftDetection).toMatchObject({ interval: '5m', mode: 'Detect' });
  });

  it('refuses a Cluster with both inCluster and a kubeConfig', async () => {
    const error = await convoyApi(kc)
      .create('Cluster', ns.name, 'both', { inCluster: true, kubeConfig: { secretRef: { name: 'k' } } })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((error as ApiException<string>).body).toContain(
      'exactly one of inCluster: true, kubeConfig or eks must be set',
    );
  });
});
