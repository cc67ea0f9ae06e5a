import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { fromKubeconfigFile } from '../../adapters/kube/kubeconfig.ts';
import { createStatusWriter } from '../../adapters/kube/status-writer.ts';
import type { Condition } from '../../domain/api/common.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import type { HealthSlice, ObserveSlice, ReleaseSlice } from '../../domain/status/slices.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';

const T = '2026-11-29T10:00:00Z';
const cond = (type: string, status: Condition['status'], reason: string): Condition => ({
  type,
  status,
  reason,
  message: `${type} is ${reason}`,
  lastTransitionTime: T,
  observedGeneration: 1,
});

const releaseSlice = (overrides: Partial<ReleaseSlice> = {}): ReleaseSlice => ({
  observedGeneration: 1,
  reconciledAt: T,
  lastAttempted: { attemptedAt: T, phase: 'Succeeded', renderRef: `sha256:${'a'.repeat(64)}` },
  lastSuccessful: { attemptedAt: T, phase: 'Succeeded', renderRef: `sha256:${'a'.repeat(64)}` },
  lastHealthy: undefined,
  rollout: { renderRef: `sha256:${'a'.repeat(64)}`, state: 'Succeeded', wave: 0 },
  waves: [{ wave: 0, objects: 1, state: 'Healthy', appliedAt: T, healthyAt: T }],
  pin: undefined,
  lifecycle: undefined,
  resolvedRetentionPolicy: { maxRenders: 20, maxAge: '720h' },
  lastHandledSyncAt: undefined,
  lastHandledForceSyncAt: undefined,
  conditions: [cond('Applied', 'True', 'Applied'), cond('RolloutSucceeded', 'True', 'Succeeded')],
  ...overrides,
});
const observeSlice: ObserveSlice = { conditions: [cond('InSync', 'True', 'InSync')] };
const healthSlice: HealthSlice = {
  healthSummary: {
    renderRef: `sha256:${'a'.repeat(64)}`,
    checkedAt: T,
    total: 1,
    healthy: 1,
    progressing: 0,
    degraded: 0,
    missing: 0,
    unknown: 0,
    objects: [],
  },
  conditions: [cond('Healthy', 'True', 'Healthy')],
};

interface ManagedFieldsEntry {
  manager: string;
  subresource?: string;
  fieldsV1?: { 'f:status'?: Record<string, unknown> };
}

/** The status paths each manager owns, as `field` or `conditions[Type]`. */
function ownership(obj: Record<string, unknown>): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  const entries = ((obj['metadata'] as { managedFields?: ManagedFieldsEntry[] }).managedFields ?? []).filter(
    (e) => e.subresource === 'status',
  );
  for (const entry of entries) {
    const status = entry.fieldsV1?.['f:status'] ?? {};
    for (const [key, value] of Object.entries(status)) {
      if (key === '.') continue;
      if (key === 'f:conditions') {
        for (const item of Object.keys(value as object)) {
          const type = /"type":"([^"]+)"/.exec(item)?.[1];
          if (type)
            owners.set(`conditions[${type}]`, [...(owners.get(`conditions[${type}]`) ?? []), entry.manager]);
        }
      } else {
        const field = key.replace(/^f:/, '');
        owners.set(field, [...(owners.get(field) ?? []), entry.manager]);
      }
    }
  }
  return owners;
}

describe('status writers on the real apiserver', () => {
  let kc: KubeConfig;
  let ns: FreshNamespace;
  const writer = () => createStatusWriter(fromKubeconfigFile(inject('kubeconfigPath')));

  beforeAll(async () => {
    kc = kubeConfigFor(inject('kubeconfigPath'));
    ns = await freshNamespace(kc, 'status-writers');
  });
  afterAll(() => ns.delete());

  async function newRelease(name: string) {
    await convoyApi(kc).create('Release', ns.name, name, releaseSpec());
    return { namespace: ns.name, name };
  }

  it('three writers own exactly the fields the spec table names, and none removes another', async () => {
    const key = await newRelease('three-writers');
    const w = writer();
    await w.apply(key, { manager: FieldManager.release, slice: releaseSlice() });
    await w.apply(key, { manager: FieldManager.observe, slice: observeSlice });
    await w.apply(key, { manager: FieldManager.health, slice: healthSlice });
    // The controller-manager writes again (a new reconcile) — it must not remove InSync/Healthy.
    await w.apply(key, {
      manager: FieldManager.release,
      slice: releaseSlice({ reconciledAt: '2026-11-29T10:01:00Z' }),
    });

    const obj = await convoyApi(kc).get('Release', ns.name, key.name);
    const status = obj['status'] as {
      conditions: Condition[];
      healthSummary?: unknown;
      reconciledAt: string;
    };
    expect(status.conditions.map((c) => c.type).sort()).toEqual([
      'Applied',
      'Healthy',
      'InSync',
      'RolloutSucceeded',
    ]);
    expect(status.healthSummary).toBeDefined();
    expect(status.reconciledAt).toBe('2026-11-29T10:01:00Z');

    const owners = ownership(obj);
    const expected: Record<string, string> = {
      'conditions[Applied]': 'convoy-release',
      'conditions[RolloutSucceeded]': 'convoy-release',
      'conditions[InSync]': 'convoy-observe',
      'conditions[Healthy]': 'convoy-health',
      healthSummary: 'convoy-health',
      observedGeneration: 'convoy-release',
      reconciledAt: 'convoy-release',
      lastAttempted: 'convoy-release',
      lastSuccessful: 'convoy-release',
      rollout: 'convoy-release',
      waves: 'convoy-release',
      resolvedRetentionPolicy: 'convoy-release',
    };
    for (const [field, manager] of Object.entries(expected)) {
      expect(owners.get(field), field).toEqual([manager]);
    }
  });

  it('a writer that leaves out one of its own fields removes only that field', async () => {
    const key = await newRelease('leave-out');
    const w = writer();
    await w.apply(key, { manager: FieldManager.release, slice: releaseSlice() });
    await w.apply(key, { manager: FieldManager.health, slice: healthSlice });
    await w.apply(key, { manager: FieldManager.release, slice: releaseSlice({ waves: undefined }) });
    const status = (await convoyApi(kc).get('Release', ns.name, key.name))['status'] as Record<
      string,
      unknown
    >;
    expect(status['waves']).toBeUndefined();
    expect(status['rollout']).toBeDefined();
    expect(status['lastSuccessful']).toBeDefined();
    expect(status['healthSummary']).toBeDefined();
    expect((status['conditions'] as Condition[]).map((c) => c.type).sort()).toEqual([
      'Applied',
      'Healthy',
      'RolloutSucceeded',
    ]);
  });

  it('re-applying identical status leaves resourceVersion unchanged', async () => {
    const key = await newRelease('idempotent');
    const w = writer();
    const first = await w.apply(key, { manager: FieldManager.release, slice: releaseSlice() });
    const second = await w.apply(key, { manager: FieldManager.release, slice: releaseSlice() });
    expect(second.resourceVersion).toBe(first.resourceVersion);
  });

  it("a writer cannot take another writer's condition", async () => {
    const key = await newRelease('foreign');
    await expect(
      writer().apply(key, {
        manager: FieldManager.observe,
        slice: { conditions: [cond('Healthy', 'True', 'Healthy')] },
      }),
    ).rejects.toThrow(/convoy-observe may not write condition Healthy/);
  });

  it('the server prints State, Applied, InSync and Healthy for releases', async () => {
    const key = await newRelease('printed');
    const w = writer();
    await w.apply(key, { manager: FieldManager.release, slice: releaseSlice() });
    await w.apply(key, {
      manager: FieldManager.observe,
      slice: { conditions: [cond('InSync', 'False', 'Drifted')] },
    });
    await w.apply(key, { manager: FieldManager.health, slice: healthSlice });
    const table = await tableOf(kc, `/apis/convoy.dev/v1alpha1/namespaces/${ns.name}/releases/${key.name}`);
    const names = table.columnDefinitions.map((c) => c.name);
    expect(names).toEqual(['Name', 'State', 'Applied', 'InSync', 'Healthy', 'Age']);
    expect(table.rows[0].cells.slice(0, 5)).toEqual(['printed', 'Succeeded', 'True', 'False', 'True']);
  });
});

async function tableOf(
  kc: KubeConfig,
  path: string,
): Promise<{ columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] }> {
  const https = await import('node:https');
  const opts: import('node:https').RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const url = new URL(kc.getCurrentCluster()!.server + path);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        ...opts,
        method: 'GET',
        headers: { ...(opts.headers ?? {}), Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(JSON.parse(body) as never)
            : reject(new Error(`${res.statusCode}: ${body}`)),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}
