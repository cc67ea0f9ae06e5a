// Admission of ReleaseSets by the real apiserver (CRD generated from domain/api/release-set.ts):
// invalid specs are refused naming the field, a valid one gets its defaults, and the status the
// pure step function computes is accepted by the status subresource under its field manager.
import {
  ApiException,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import { parseReleaseSet } from '../../domain/api/release-set.ts';
import { decideFleet } from '../../domain/fleet/decide-fleet.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';

const git = { url: 'https://git.example.invalid/apps.git', ref: { branch: 'main' } };
const base = {
  clusters: { selector: { matchLabels: { tier: 'prod' } } },
  template: { spec: { source: { git } } },
};
const withRollout = (rollout: Record<string, unknown>) => ({ ...base, rollout });

const invalid: { name: string; spec: Record<string, unknown>; field: string; reason: RegExp }[] = [
  {
    name: 'maxConcurrent: 0',
    spec: withRollout({ maxConcurrent: 0 }),
    field: 'spec.rollout.maxConcurrent',
    reason: /should be greater than or equal to 1/,
  },
  {
    name: "maxConcurrent: '0%'",
    spec: withRollout({ maxConcurrent: '0%' }),
    field: 'spec.rollout.maxConcurrent',
    reason: /should match/,
  },
  {
    name: "maxFailures: '150%'",
    spec: withRollout({ maxFailures: '150%' }),
    field: 'spec.rollout.maxFailures',
    reason: /should match/,
  },
  {
    name: 'a negative maxFailures',
    spec: withRollout({ maxFailures: -1 }),
    field: 'spec.rollout.maxFailures',
    reason: /should be greater than or equal to 0/,
  },
  {
    name: 'a step maxConcurrent of 0',
    spec: withRollout({ steps: [{ name: 'canary', clusters: {}, maxConcurrent: 0 }] }),
    field: 'spec.rollout.steps[0].maxConcurrent',
    reason: /should be greater than or equal to 1/,
  },
  {
    name: 'a negative stepTimeout',
    spec: withRollout({ stepTimeout: '-5m' }),
    field: 'spec.rollout.stepTimeout',
    reason: /should match/,
  },
  {
    name: 'two steps with one name',
    spec: withRollout({
      steps: [
        { name: 'a', clusters: {} },
        { name: 'a', clusters: {} },
      ],
    }),
    field: 'spec.rollout.steps[1]',
    reason: /Duplicate value/,
  },
  {
    name: 'a step name that is not a DNS label',
    spec: withRollout({ steps: [{ name: 'Canary!', clusters: {} }] }),
    field: 'spec.rollout.steps[0].name',
    reason: /should match/,
  },
  {
    name: 'an unknown onFailure',
    spec: withRollout({ onFailure: 'Retry' }),
    field: 'spec.rollout.onFailure',
    reason: /Unsupported value: "Retry"/,
  },
  {
    name: 'an unknown approval',
    spec: withRollout({ steps: [{ name: 'a', clusters: {}, approval: 'Maybe' }] }),
    field: 'spec.rollout.steps[0].approval',
    reason: /Unsupported value: "Maybe"/,
  },
  {
    name: 'a template naming a cluster',
    spec: { ...base, template: { spec: { cluster: { name: 'x' }, source: { git } } } },
    field: 'spec.template.spec',
    reason: /cluster is not allowed: each child Release targets the Cluster it is generated for/,
  },
  {
    name: 'an override naming a cluster',
    spec: { ...base, overrides: [{ clusters: {}, spec: { cluster: { name: 'x' } } }] },
    field: 'spec.overrides[0].spec',
    reason: /cluster is not allowed/,
  },
  {
    name: 'a template without source',
    spec: { ...base, template: { spec: { targetNamespace: 'x' } } },
    field: 'spec.template.spec.source',
    reason: /Required value/,
  },
  {
    name: 'clusters without selector or names',
    spec: { ...base, clusters: { exclude: ['a'] } },
    field: 'spec.clusters',
    reason: /set selector, names or both/,
  },
  {
    name: 'an In requirement without values',
    spec: { ...base, clusters: { selector: { matchExpressions: [{ key: 'tier', operator: 'In' }] } } },
    field: 'spec.clusters.selector.matchExpressions[0]',
    reason: /values must be non-empty for In and NotIn, and absent for Exists and DoesNotExist/,
  },
  {
    name: 'an Exists requirement with values',
    spec: {
      ...base,
      clusters: { selector: { matchExpressions: [{ key: 'tier', operator: 'Exists', values: ['x'] }] } },
    },
    field: 'spec.clusters.selector.matchExpressions[0]',
    reason: /values must be non-empty for In and NotIn, and absent for Exists and DoesNotExist/,
  },
  {
    name: 'an unknown onRemoval',
    spec: { ...base, clusters: { names: ['a'], onRemoval: 'Keep' } },
    field: 'spec.clusters.onRemoval',
    reason: /Unsupported value: "Keep"/,
  },
  {
    name: 'a cluster name that is not a DNS name',
    spec: { ...base, clusters: { names: ['Not_A_Name'] } },
    field: 'spec.clusters.names[0]',
    reason: /should match/,
  },
];

describe('admission of ReleaseSets (CRD schema + CEL)', () => {
  let kc: KubeConfig;
  let api: CustomObjectsApi;
  let ns: FreshNamespace;
  const target = (namespace: string) => ({
    group: API_GROUP,
    version: API_VERSION,
    namespace,
    plural: 'releasesets',
  });
  const create = (namespace: string, name: string, spec: unknown) =>
    api.createNamespacedCustomObject({
      ...target(namespace),
      body: {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: 'ReleaseSet',
        metadata: { name, namespace },
        spec,
      },
    });

  beforeAll(async () => {
    kc = kubeConfigFor(inject('kubeconfigPath'));
    api = kc.makeApiClient(CustomObjectsApi);
    ns = await freshNamespace(kc, 'rset-admission');
  });
  afterAll(() => ns.delete());

  for (const row of invalid) {
    it(`refuses ${row.name}, naming ${row.field}`, async () => {
      const error = await create(ns.name, 'invalid', row.spec).then(
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

  it('accepts a valid ReleaseSet (short name rset), fills the defaults, and keeps ${cluster.…} in patterned fields', async () => {
    await create(ns.name, 'web', {
      ...base,
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          targetNamespace: '${cluster.name}',
          syncPolicy: { interval: '${cluster.annotations.example.com/interval}' },
          source: { git },
        },
      },
      overrides: [
        {
          clusters: { matchLabels: { region: 'eu' } },
          spec: { content: { helm: { values: { replicas: 5 } } } },
        },
      ],
      rollout: {
        maxConcurrent: '25%',
        steps: [
          {
            name: 'canary',
            clusters: { matchExpressions: [{ key: 'ring', operator: 'In', values: ['canary'] }] },
            approval: 'Required',
            maxConcurrent: 1,
          },
        ],
      },
    });
    const parsed = parseReleaseSet(await api.getNamespacedCustomObject({ ...target(ns.name), name: 'web' }));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.spec.clusters.onRemoval).toBe('Delete');
    expect(parsed.value.spec.rollout).toMatchObject({
      paused: false,
      maxConcurrent: '25%',
      maxFailures: 0,
      minHealthyTime: '0s',
      stepTimeout: '30m',
      onFailure: 'Halt',
    });
    expect(parsed.value.spec.template.spec['targetNamespace']).toBe('${cluster.name}');
    expect(parsed.value.spec.overrides?.[0]?.spec).toEqual({
      content: { helm: { values: { replicas: 5 } } },
    });
  });

  it('takes the status decideFleet computes, applied by the convoy-releaseset field manager', async () => {
    await create(ns.name, 'status', base);
    const parsed = parseReleaseSet(
      await api.getNamespacedCustomObject({ ...target(ns.name), name: 'status' }),
    );
    if (!parsed.ok) throw new Error(parsed.error);
    const clusters = Array.from({ length: 30 }, (_, i) => ({
      name: `c-${i}`,
      labels: { tier: 'prod' },
      annotations: {},
    }));
    const decision = decideFleet({
      set: parsed.value,
      clusters: { ok: true, clusters },
      source: { ok: true, resolved: { git: { url: git.url, commit: 'c'.repeat(40) } } },
      releases: [],
      now: new Date(),
    });
    expect(decision.writes).toHaveLength(30);
    await api.patchNamespacedCustomObjectStatus(
      {
        ...target(ns.name),
        name: 'status',
        body: {
          apiVersion: `${API_GROUP}/${API_VERSION}`,
          kind: 'ReleaseSet',
          metadata: { name: 'status', namespace: ns.name },
          status: decision.status,
        },
        fieldManager: FieldManager.releaseSet,
        force: true,
      },
      setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
    );
    const after = parseReleaseSet(
      await api.getNamespacedCustomObject({ ...target(ns.name), name: 'status' }),
    );
    if (!after.ok) throw new Error(after.error);
    expect(after.value.status?.rollout?.state).toBe('Progressing');
    expect(after.value.status?.clusters).toMatchObject({ selected: 30, updated: 0 });
    expect(after.value.status?.conditions?.map((c) => `${c.type}=${c.status}/${c.reason}`)).toEqual([
      'Generated=True/Generated',
      'RolloutSucceeded=False/WaitingForBatchHealth',
    ]);
    const managers = (
      (after.value.metadata as { managedFields?: { manager?: string; subresource?: string }[] })
        .managedFields ?? []
    )
      .filter((f) => f.subresource === 'status')
      .map((f) => f.manager);
    expect(managers).toEqual([FieldManager.releaseSet]);
  });
});
