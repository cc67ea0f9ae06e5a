// ReleaseSets for the operator tests (CLI, HTTP API, dashboard): a set with steps, its status
// written straight to /status by the field manager the fleet function uses (convoy-releaseset),
// child Releases labelled as the function labels them, and an Event about the set, so the operator
// surface is tested on the real apiserver without the fleet function (built in parallel).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CustomObjectsApi,
  EventsV1Api,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import type { ReleaseSetStatus } from '../../domain/api/release-set.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import { convoyApi, releaseSpec } from './releases.ts';

export const REVISION_A = {
  id: 'aaaaaaaaaaaaaaaa',
  templateHash: `sha256:${'1'.repeat(64)}`,
  source: { git: { url: 'https://git.example.invalid/apps.git', commit: 'a'.repeat(40) } },
};
export const REVISION_B = {
  id: 'bbbbbbbbbbbbbbbb',
  templateHash: `sha256:${'2'.repeat(64)}`,
  source: { git: { url: 'https://git.example.invalid/apps.git', commit: 'b'.repeat(40) } },
};

const T = '2026-01-01T12:00:00Z';
const cond = (
  type: string,
  status: 'True' | 'False' | 'Unknown',
  reason: string,
  message: string,
  generation: number,
) => ({ type, status, reason, message, lastTransitionTime: T, observedGeneration: generation });

export const SET_SPEC = {
  clusters: { selector: {} },
  template: {
    spec: { source: { git: { url: 'https://git.example.invalid/apps.git', ref: { branch: 'main' } } } },
  },
  rollout: {
    maxFailures: 1,
    steps: [
      { name: 'canary', clusters: { matchLabels: { ring: 'canary' } } },
      { name: 'eu', clusters: { matchLabels: { region: 'eu' } }, approval: 'Required' },
    ],
  },
};

/** Revision B's rollout: canary done (1 failed within budget), step eu waits for approval; lastSucceededRevision A. */
export function waitingStatus(generation: number): ReleaseSetStatus {
  return {
    observedGeneration: generation,
    revision: REVISION_B,
    lastSucceededRevision: REVISION_A,
    rollout: { state: 'WaitingForApproval', step: 1, stepName: 'eu' },
    clusters: { selected: 3, updated: 1, ready: 0, waiting: 2, failed: 1 },
    releaseConditions: {
      Applied: { True: 3, False: 0, Unknown: 0 },
      InSync: { True: 3, False: 0, Unknown: 0 },
      Healthy: { True: 2, False: 1, Unknown: 0 },
      RolloutSucceeded: { True: 0, False: 0, Unknown: 0 },
    },
    steps: [
      { name: 'canary', clusters: 1, updated: 1, ready: 0, failed: 1, state: 'Succeeded', finishedAt: T },
      { name: 'eu', clusters: 2, updated: 0, ready: 0, failed: 0, state: 'WaitingForApproval' },
    ],
    failing: [
      {
        cluster: 'canary-1',
        release: 'web-canary-1',
        signal: 'Healthy',
        reason: 'Degraded',
        message: 'Deployment web/web: 0/3 replicas available',
        since: T,
      },
    ],
    failingOmitted: 0,
    held: [{ cluster: 'eu-2', release: 'web-eu-2', reason: 'PinnedByUser' }],
    heldOmitted: 0,
    conditions: [
      cond(
        'Generated',
        'True',
        'Generated',
        `3 child Releases generated at revision ${REVISION_B.id}`,
        generation,
      ),
      cond(
        'RolloutSucceeded',
        'False',
        'WaitingForApproval',
        `step eu (2 Clusters) needs approval: annotate the ReleaseSet convoy.dev/approve=eu@${REVISION_B.id}`,
        generation,
      ),
    ],
  };
}

export function succeededStatus(generation: number): ReleaseSetStatus {
  const w = waitingStatus(generation);
  return {
    ...w,
    lastSucceededRevision: REVISION_B,
    rollout: { state: 'Succeeded', step: 1, stepName: 'eu' },
    clusters: { selected: 3, updated: 3, ready: 3, waiting: 0, failed: 0 },
    steps: w.steps?.map((s) => ({ ...s, state: 'Succeeded', finishedAt: T })),
    failing: [],
    held: [],
    conditions: [
      w.conditions![0],
      cond(
        'RolloutSucceeded',
        'True',
        'Succeeded',
        `revision ${REVISION_B.id} is rolled out: every step succeeded (3 Clusters selected)`,
        generation,
      ),
    ],
  };
}

/** The status as the fleet function writes it: server-side apply on /status, field manager convoy-releaseset. */
export async function writeSetStatus(
  admin: KubeConfig,
  namespace: string,
  name: string,
  status: (generation: number) => ReleaseSetStatus,
): Promise<void> {
  const api = admin.makeApiClient(CustomObjectsApi);
  const target = { group: API_GROUP, version: API_VERSION, namespace, plural: 'releasesets', name };
  const current = (await api.getNamespacedCustomObject(target)) as { metadata: { generation: number } };
  await api.patchNamespacedCustomObjectStatus(
    {
      ...target,
      body: {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: 'ReleaseSet',
        metadata: { name, namespace },
        status: status(current.metadata.generation),
      },
      fieldManager: FieldManager.releaseSet,
      force: true,
    },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  );
}

/** The set `web` with its children (web-canary-1, web-eu-1, web-eu-2), a step Event, and the waiting status. */
export async function createWaitingSet(admin: KubeConfig, namespace: string, name = 'web'): Promise<void> {
  const convoy = convoyApi(admin);
  const set = (await convoy.create('ReleaseSet', namespace, name, SET_SPEC)) as { metadata: { uid: string } };
  for (const [cluster, revision] of [
    ['canary-1', REVISION_B.id],
    ['eu-1', REVISION_A.id],
    ['eu-2', REVISION_A.id],
  ] as const) {
    await convoy.raw.createNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      namespace,
      plural: 'releases',
      body: {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: 'Release',
        metadata: {
          name: `${name}-${cluster}`,
          namespace,
          labels: { 'convoy.dev/release-set': name, 'convoy.dev/cluster': cluster },
          annotations: { 'convoy.dev/release-set-revision': revision },
          ownerReferences: [
            {
              apiVersion: `${API_GROUP}/${API_VERSION}`,
              kind: 'ReleaseSet',
              name,
              uid: set.metadata.uid,
              controller: true,
            },
          ],
        },
        spec: releaseSpec({ cluster: { name: cluster } }),
      },
    });
  }
  await admin.makeApiClient(EventsV1Api).createNamespacedEvent({
    namespace,
    body: {
      metadata: { name: `${name}.step-started` },
      eventTime: new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date, // MicroTime
      reportingController: 'convoy.dev/fleet',
      reportingInstance: 'convoy-fleet',
      action: 'Rollout',
      reason: 'StepStarted',
      note: 'step canary started: 1 Clusters, at most 1 at once',
      type: 'Normal',
      regarding: {
        apiVersion: `${API_GROUP}/${API_VERSION}`,
        kind: 'ReleaseSet',
        name,
        namespace,
        uid: set.metadata.uid,
      },
    },
  });
  await writeSetStatus(admin, namespace, name, waitingStatus);
}

/** A kubeconfig file for a bearer token on the admin's cluster (server, CA): a tenant as kubectl would hold it. */
export async function tokenKubeconfig(
  admin: KubeConfig,
  token: string,
  dir: string,
  file: string,
): Promise<string> {
  const cluster = admin.getCurrentCluster();
  if (cluster === null) throw new Error('the admin kubeconfig has no current cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ ...cluster, name: 'test' }],
    users: [{ name: 'tenant', token }],
    contexts: [{ name: 'tenant', cluster: 'test', user: 'tenant' }],
    currentContext: 'tenant',
  });
  const path = join(dir, file);
  await writeFile(path, kc.exportConfig());
  return path;
}
