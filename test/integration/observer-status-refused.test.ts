// A health or drift status that the Release CRD refuses (convoy's own fault) ends in a named
// reason, once, instead of a retry loop — as the reconcile's refused status does (Applied
// DeployFailed). The fault: the real status writer on the real apiserver, handed a slice with one
// value the CRD schema refuses (what a bug copying input into status would produce).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createObserverTargetResolver } from '../../adapters/kube/observer-target.ts';
import { createStatusWriter, type StatusWriter } from '../../adapters/kube/status-writer.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { Loop } from '../../domain/runtime/queue-message.ts';
import type { AnySlice } from '../../domain/status/slices.ts';
import { createDriftRecordHandler } from '../../functions/drift/drift-record.ts';
import { createHealthRecordHandler } from '../../functions/health/health-record.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createLogger } from '../../platform/logger.ts';
import type { RecordHandler } from '../../functions/runtime/sqs-batch-handler.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { startReconcileEnv, type ReconcileEnv } from '../harness/reconcile-env.ts';

const TOO_LONG = 'x'.repeat(40_000);

/** The real writer; the first `times` writes carry a condition message longer than the CRD allows. */
function corruptingWriter(real: StatusWriter, times: number): StatusWriter & { attempts: AnySlice[] } {
  const attempts: AnySlice[] = [];
  return {
    attempts,
    apply(key, write) {
      attempts.push(write);
      if (attempts.length > times) return real.apply(key, write);
      const slice = {
        ...write.slice,
        conditions: write.slice.conditions.map((c) => ({ ...c, message: TOO_LONG })),
      };
      return real.apply(key, { ...write, slice } as AnySlice);
    },
  };
}

describe('a refused observer status ends in a named reason', () => {
  let env: ReconcileEnv;
  const logger = createLogger({ base: { test: 'observer-status-refused' }, level: 'error' });

  beforeAll(async () => {
    env = await startReconcileEnv(kubeConfigFor(inject('kubeconfigPath')), 'obs-refused');
  });
  afterAll(() => env.close());

  async function appliedRelease(name: string): Promise<Release> {
    const repo = await env.repo(name, {
      'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}-cm}\ndata: {a: "1"}\n`,
    });
    await env.api.create('Release', env.ns.name, name, {
      cluster: { name: 'local' },
      targetNamespace: env.ns.name,
      source: { git: { url: repo.url, ref: { branch: 'main' } } },
      healthAssessment: { interval: '1m' },
    });
    for (let i = 0; i < 10; i++) {
      const { release } = await env.reconcile(name);
      if (
        release.status?.lastSuccessful?.renderRef !== undefined &&
        release.status.lastSuccessful.renderRef === release.status.lastAttempted?.renderRef
      )
        return release;
    }
    throw new Error(`${name} was not applied`);
  }

  const invoke = async (handler: RecordHandler, loop: Loop, release: Release) =>
    handler(
      {
        v: 1,
        loop,
        namespace: env.ns.name,
        name: release.metadata.name,
        uid: release.metadata.uid ?? '',
        cause: 'test',
        sentAt: new Date().toISOString(),
      },
      { logger, receiveCount: 1, messageId: `test-${loop}`, record: {} as never },
    );

  it('health: Healthy Unknown/Pending naming the refused field, no healthSummary, outcome stop (not retried)', async () => {
    const release = await appliedRelease('health-refused');
    const writer = corruptingWriter(createStatusWriter(env.config), 1);
    const handler = createHealthRecordHandler({
      releases: createReleaseSource(env.config),
      statusWriter: writer,
      targets: createObserverTargetResolver({ managementKubeConfig: env.config }),
      renders: env.store,
    });
    const outcome = await invoke(handler, 'health', release);
    expect(outcome.kind).toBe('stop');
    expect(writer.attempts).toHaveLength(2);
    const after = await env.api.getRelease(env.ns.name, release.metadata.name);
    const healthy = after.status?.conditions?.find((c) => c.type === 'Healthy');
    expect(healthy).toMatchObject({ status: 'Unknown', reason: 'Pending' });
    expect(healthy?.message).toMatch(
      /health status convoy computed was refused.*status\.conditions\.0\.message/,
    );
    expect(after.status?.healthSummary).toBeUndefined();
    // The reconcile's own fields are untouched.
    expect(after.status?.lastSuccessful?.renderRef).toBe(release.status?.lastSuccessful?.renderRef);
  });

  it('drift: InSync Unknown/Pending naming the refused field, outcome stop (not retried)', async () => {
    const release = await appliedRelease('drift-refused');
    const writer = corruptingWriter(createStatusWriter(env.config), 1);
    const handler = createDriftRecordHandler({
      releases: createReleaseSource(env.config),
      statusWriter: writer,
      targets: createObserverTargetResolver({ managementKubeConfig: env.config }),
      renders: env.store,
      notify: () => Promise.resolve(),
    });
    const outcome = await invoke(handler, 'drift', release);
    expect(outcome.kind).toBe('stop');
    expect(writer.attempts).toHaveLength(2);
    const after = await env.api.getRelease(env.ns.name, release.metadata.name);
    const inSync = after.status?.conditions?.find((c) => c.type === 'InSync');
    expect(inSync).toMatchObject({ status: 'Unknown', reason: 'Pending' });
    expect(inSync?.message).toMatch(
      /drift status convoy computed was refused.*status\.conditions\.0\.message/,
    );
  });
});
