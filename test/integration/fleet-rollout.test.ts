// ReleaseSet rollouts on real apiservers: the management apiserver of the
// run with convoy's runtime as `convoy dev` starts it (relay, fauxqs, the fleet function and the
// Release loops as the install's identities), three real target apiservers with controllers and
// KWOK nodes registered as Clusters c1 (ring: canary), c2 (ring: early), c3 (ring: late). The app
// is a Helm chart in Git whose template gets `ring: ${cluster.labels.ring}`; its revision 2 makes
// the pods of ring canary crash-loop (KWOK's failure stage), so the canary child's verdict fails
// (Healthy False/Degraded once the Deployment's progress deadline passed).
//
// Steps: canary (ring canary, maxConcurrent 1), early (ring early), then the implicit (remaining).
// A manual rollback (`convoy rollback rset/<name>`, the CLI run as the tenant's ServiceAccount)
// takes the first test's set, with approval before step early, from WaitingForApproval at revision
// 2 back to revision 1 through the fleet function.
//
// The relay sends the sets their fleet messages (set, Cluster and child verdict changes). A new commit of the
// source after a succeeded rollout wakes nothing by design (docs/fleet.md: the source is resolved
// when the set runs); the tests send one message after such a commit, as a Git webhook would.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_GROUP } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { FleetAnnotation, FleetLabel } from '../../domain/fleet/labels.ts';
import { combinedVerdict } from '../../domain/status/verdict.ts';
import { FLEET_LABEL, conditionOf, fleetTemplate, targetApp, type TargetApp } from '../harness/fleet.ts';
import { runConvoy } from '../harness/cli.ts';
import { serviceAccountUser } from '../harness/dashboard.ts';
import { tokenKubeconfig } from '../harness/release-set-fixture.ts';
import { until } from '../harness/runtime-env.ts';
import { startFleetScenario, type FleetScenario } from '../harness/fleet-scenario.ts';

const CLUSTERS = [
  { name: 'c1', labels: { ring: 'canary' } },
  { name: 'c2', labels: { ring: 'early' } },
  { name: 'c3', labels: { ring: 'late' } },
] as const;
const LATER = ['c2', 'c3'] as const;

let fleet: FleetScenario;

beforeAll(async () => {
  fleet = await startFleetScenario('fleet-rollout', CLUSTERS);
}, 240_000);

afterAll(async () => {
  await fleet?.close();
});

function setSpec(
  repoUrl: string,
  targetNamespace: string,
  rollout: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    clusters: { selector: { matchLabels: { [FLEET_LABEL]: 'true' } } },
    template: fleetTemplate(repoUrl, targetNamespace),
    rollout: {
      steps: [
        { name: 'canary', clusters: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1 },
        { name: 'early', clusters: { matchLabels: { ring: 'early' } } },
      ],
      ...rollout,
    },
  };
}

const child = (set: string, cluster: string) => `${set}-${cluster}`;

async function children(set: string): Promise<Map<string, Release>> {
  return fleet.sets.children(set);
}

/** The set's children by Cluster, each with the fields a test compares before and after. */
async function snapshot(
  set: string,
): Promise<
  Record<string, { generation: number | undefined; revision: string | undefined; source: unknown }>
> {
  const out: Record<
    string,
    { generation: number | undefined; revision: string | undefined; source: unknown }
  > = {};
  for (const release of (await children(set)).values()) {
    const cluster = release.metadata.labels?.[FleetLabel.cluster] ?? '?';
    out[cluster] = {
      generation: release.metadata.generation,
      revision: release.metadata.annotations?.[FleetAnnotation.revision],
      source: release.spec.source,
    };
  }
  return out;
}

/** Creates the set on a fresh app (revision 1) and waits for its first rollout to succeed. */
async function rolledOut(
  name: string,
  rollout: Record<string, unknown> = {},
): Promise<{ set: ReleaseSet; repo: { url: string; commit: string } }> {
  const repo = await fleet.app(name);
  await fleet.sets.create(name, setSpec(repo.url, name, rollout));
  const set = await fleet.succeeded(name);
  return { set, repo };
}

describe('a ReleaseSet rolls out to three real clusters', () => {
  it(
    "rollout in 3 steps (canary of 1, then the rest) succeeds; every child is pinned to the commit and runs it with its Cluster's labels",
    { timeout: 300_000 },
    async () => {
      const name = 'ok';
      const { set, repo } = await rolledOut(name);

      // The revision: one commit for the whole rollout.
      expect(set.status?.revision?.source.git?.commit).toBe(repo.commit);
      expect(conditionOf(set, 'Generated')).toMatchObject({
        status: 'True',
        observedGeneration: set.metadata.generation,
      });
      expect(conditionOf(set, 'RolloutSucceeded')).toMatchObject({ status: 'True', reason: 'Succeeded' });
      expect(set.status?.clusters).toEqual({ selected: 3, updated: 3, ready: 3, waiting: 0, failed: 0 });
      expect(set.status?.steps?.map((s) => [s.name, s.clusters, s.state])).toEqual([
        ['canary', 1, 'Succeeded'],
        ['early', 1, 'Succeeded'],
        ['(remaining)', 1, 'Succeeded'],
      ]);

      // One child per Cluster, owned by the set, pinned to the commit, at the revision, Ready.
      const kids = await children(name);
      expect([...kids.keys()].sort()).toEqual(CLUSTERS.map((c) => child(name, c.name)));
      for (const { name: cluster, labels } of CLUSTERS) {
        const release = kids.get(child(name, cluster))!;
        expect(release.metadata.ownerReferences).toEqual([
          expect.objectContaining({ kind: 'ReleaseSet', name, uid: set.metadata.uid, controller: true }),
        ]);
        expect(release.metadata.labels).toMatchObject({
          [FleetLabel.releaseSet]: name,
          [FleetLabel.cluster]: cluster,
        });
        expect(release.metadata.annotations?.[FleetAnnotation.revision]).toBe(set.status?.revision?.id);
        expect(release.spec.cluster.name).toBe(cluster);
        expect(release.spec.source.git).toMatchObject({
          url: repo.url,
          path: 'chart',
          ref: { commit: repo.commit },
        });
        expect(combinedVerdict(release)).toMatchObject({ ready: true, health: 'Assessed' });
        // The target runs revision 1 rendered with its own Cluster's label.
        expect(await targetApp(fleet.target(cluster), name)).toEqual({
          revision: 1,
          ring: labels.ring,
          image: 'registry.invalid/web:1',
          rolledOut: true,
        });
      }

      // Step by step: a later step's child was written only after the step before it succeeded.
      const finishedAt = (step: string) =>
        Date.parse(set.status?.steps?.find((s) => s.name === step)?.finishedAt ?? 'NaN');
      const createdAt = (cluster: string) =>
        Date.parse(kids.get(child(name, cluster))?.metadata.creationTimestamp ?? 'NaN');
      expect(createdAt('c2')).toBeGreaterThanOrEqual(Math.floor(finishedAt('canary') / 1000) * 1000);
      expect(createdAt('c3')).toBeGreaterThanOrEqual(Math.floor(finishedAt('early') / 1000) * 1000);
    },
  );

  it(
    "a second revision whose canary fails halts the rollout: Halted, the canary on revision 2, later steps' children untouched on revision 1",
    { timeout: 360_000 },
    async () => {
      const name = 'halt';
      const { set: first } = await rolledOut(name);
      const before = await snapshot(name);

      const { commit } = await fleet.commitRevision(name, { revision: 2, failRings: ['canary'] });
      await fleet.kick(name, 'a new commit (as a Git webhook would)');
      const halted = await fleet.waitForSet(
        name,
        'the rollout of revision 2 halted',
        (s) => s.status?.rollout?.state === 'Halted' && s,
      );

      expect(halted.status?.revision?.source.git?.commit).toBe(commit);
      expect(halted.status?.lastSucceededRevision?.id).toBe(first.status?.revision?.id);
      expect(conditionOf(halted, 'RolloutSucceeded')).toMatchObject({
        status: 'False',
        reason: 'StepFailed',
      });
      expect(halted.status?.rollout).toMatchObject({ state: 'Halted', stepName: 'canary' });
      expect(halted.status?.steps?.map((s) => [s.name, s.state])).toEqual([
        ['canary', 'Failed'],
        ['early', 'Pending'],
        ['(remaining)', 'Pending'],
      ]);
      expect(halted.status?.failing).toEqual([
        expect.objectContaining({
          cluster: 'c1',
          release: child(name, 'c1'),
          signal: 'Healthy',
          reason: 'Degraded',
        }),
      ]);
      expect(halted.status?.clusters).toMatchObject({ selected: 3, updated: 1, failed: 1 });

      // The canary runs revision 2 and fails there; nothing was rolled to the later steps.
      const after = await snapshot(name);
      expect(after['c1']?.revision).toBe(halted.status?.revision?.id);
      expect(await targetApp(fleet.target('c1'), name)).toMatchObject({
        revision: 2,
        image: 'registry.invalid/web:2',
        rolledOut: false,
      });
      for (const cluster of LATER) {
        expect(after[cluster], cluster).toEqual(before[cluster]);
        expect(await targetApp(fleet.target(cluster), name)).toMatchObject({
          revision: 1,
          image: 'registry.invalid/web:1',
          rolledOut: true,
        });
      }
    },
  );

  it(
    "the same with onFailure RollbackFleet: the canary goes back to revision 1's render (pinned), later steps' children are never touched",
    { timeout: 360_000 },
    async () => {
      const name = 'back';
      const { set: first } = await rolledOut(name, { onFailure: 'RollbackFleet' });
      const before = await snapshot(name);
      const canaryRender = (await children(name)).get(child(name, 'c1'))?.status?.lastSuccessful?.renderRef;
      expect(canaryRender).toBeDefined();

      await fleet.commitRevision(name, { revision: 2, failRings: ['canary'] });
      await fleet.kick(name, 'a new commit (as a Git webhook would)');
      const rolledBack = await fleet.waitForSet(
        name,
        'the rollout of revision 2 rolled back',
        (s) => s.status?.rollout?.state === 'RolledBack' && s,
      );

      expect(conditionOf(rolledBack, 'RolloutSucceeded')).toMatchObject({
        status: 'False',
        reason: 'RolledBack',
      });
      expect(rolledBack.status?.lastSucceededRevision?.id).toBe(first.status?.revision?.id);
      expect(rolledBack.status?.failing).toEqual([expect.objectContaining({ cluster: 'c1' })]);

      // The canary child pins the render it ran at revision 1 (the set's pin, not a user's) …
      const canary = (await children(name)).get(child(name, 'c1'))!;
      expect(canary.metadata.annotations).toMatchObject({
        'convoy.dev/pin': canaryRender,
        [FleetAnnotation.setPin]: canaryRender,
      });
      // … and the target runs revision 1 again, available: through the render store, not a Git revert.
      const back = await waitForTarget('c1', name, (app) => app.revision === 1 && app.rolledOut);
      expect(back).toMatchObject({ revision: 1, ring: 'canary', image: 'registry.invalid/web:1' });

      const after = await snapshot(name);
      for (const cluster of LATER) {
        expect(after[cluster], cluster).toEqual(before[cluster]);
        expect(await targetApp(fleet.target(cluster), name)).toMatchObject({ revision: 1, rolledOut: true });
      }
    },
  );
});

describe('a manual rollback (convoy rollback rset/<name>) by the tenant', () => {
  it(
    "revision 2 waits for approval after the canary; `convoy rollback` as the tenant: RolledBack/RollbackRequested, a Warning Event, the canary back on revision 1's render, later children untouched",
    { timeout: 300_000 },
    async () => {
      // The set of the first test, at revision 1 Succeeded; step early now needs approval (the rollout
      // knobs are not part of the revision: nothing is rolled out for this change).
      const name = 'ok';
      await fleet.sets.patch(name, {
        spec: {
          rollout: {
            steps: [
              { name: 'canary', clusters: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1 },
              { name: 'early', clusters: { matchLabels: { ring: 'early' } }, approval: 'Required' },
            ],
          },
        },
      });
      const first = await fleet.succeeded(name);
      const revision1 = first.status?.revision?.id ?? '';
      const before = await snapshot(name);
      const canaryRender = (await children(name)).get(child(name, 'c1'))?.status?.lastSuccessful?.renderRef;
      expect(canaryRender).toBeDefined();

      await fleet.commitRevision(name, { revision: 2 });
      await fleet.kick(name, 'a new commit (as a Git webhook would)');
      const waiting = await fleet.waitForSet(
        name,
        'revision 2 waits for approval of step early',
        (s) => s.status?.rollout?.state === 'WaitingForApproval' && s.status.revision?.id !== revision1 && s,
      );
      const revision2 = waiting.status?.revision?.id ?? '';
      expect(waiting.status?.rollout?.stepName).toBe('early');
      expect((await snapshot(name))['c1']?.revision).toBe(revision2);
      expect(await targetApp(fleet.target('c1'), name)).toMatchObject({ revision: 2, rolledOut: true });

      // The tenant (a ServiceAccount whose Role allows ReleaseSets in this namespace, as in
      // release-set-operator.test.ts), with the real CLI and its own kubeconfig: never admin.
      const tenant = await serviceAccountUser(fleet.admin, fleet.namespace, 'rset-tenant', [
        {
          namespace: fleet.namespace,
          rules: [
            { apiGroups: [API_GROUP], resources: ['releasesets'], verbs: ['get', 'list', 'update', 'patch'] },
            { apiGroups: [API_GROUP], resources: ['releases'], verbs: ['get', 'list'] },
            { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['list'] },
          ],
        },
      ]);
      const dir = await mkdtemp(join(tmpdir(), 'convoy-fleet-rollback-'));
      try {
        const kubeconfig = await tokenKubeconfig(fleet.admin, tenant.token, dir, 'tenant.yaml');
        const run = await runConvoy(['rollback', `rset/${name}`, '-n', fleet.namespace], kubeconfig);
        expect(run.stderr).toBe('');
        expect(run.code).toBe(0);
        expect(run.stdout.trim()).toBe(
          `${fleet.namespace}/${name}: rollback of revision ${revision2} to ${revision1} requested (${FleetAnnotation.rollback}=${revision2}); convoy describe rset/${name} -n ${fleet.namespace} shows it`,
        );

        // The relay sees the annotation and wakes the set; the fleet function rolls the canary back.
        const rolledBack = await fleet.waitForSet(
          name,
          'RolledBack on the request',
          (s) => s.status?.rollout?.state === 'RolledBack' && s,
        );
        const expected = `rollback requested (${FleetAnnotation.rollback}=${revision2}): rolled back 1 Clusters to revision ${revision1} (lastSucceededRevision)`;
        expect(conditionOf(rolledBack, 'RolloutSucceeded')).toMatchObject({
          status: 'False',
          reason: 'RollbackRequested',
          message: expected,
          observedGeneration: rolledBack.metadata.generation,
        });
        expect(rolledBack.status?.revision?.id).toBe(revision2);
        expect(rolledBack.status?.lastSucceededRevision?.id).toBe(revision1);
        expect(rolledBack.status?.rollout).toMatchObject({ state: 'RolledBack', stepName: 'early' });
        const events = await until(
          'the Warning Event RollbackRequested, as the tenant reads it',
          async () => {
            const listed = await runConvoy(
              ['events', `rset/${name}`, '-n', fleet.namespace, '-o', 'json'],
              kubeconfig,
            );
            expect(listed.code).toBe(0);
            const all = JSON.parse(listed.stdout) as {
              type: string;
              reason: string;
              note: string;
              reportingController: string;
            }[];
            return all.some((e) => e.reason === 'RollbackRequested') && all;
          },
          { timeoutMs: 30_000, intervalMs: 500 },
        );
        expect(events.filter((e) => e.reason === 'RollbackRequested')).toEqual([
          expect.objectContaining({
            type: 'Warning',
            note: expected,
            reportingController: 'convoy.dev/fleet',
          }),
        ]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }

      // The canary child pins its revision-1 render (the set's pin) and its target runs revision 1 again.
      const canary = (await children(name)).get(child(name, 'c1'))!;
      expect(canary.metadata.annotations).toMatchObject({
        'convoy.dev/pin': canaryRender,
        [FleetAnnotation.setPin]: canaryRender,
      });
      expect(await waitForTarget('c1', name, (app) => app.revision === 1 && app.rolledOut)).toMatchObject({
        revision: 1,
        ring: 'canary',
        image: 'registry.invalid/web:1',
      });
      // Later steps' children were never touched: same generation, revision annotation and source; their targets on revision 1.
      const after = await snapshot(name);
      for (const cluster of LATER) {
        expect(after[cluster], cluster).toEqual(before[cluster]);
        expect(await targetApp(fleet.target(cluster), name)).toMatchObject({ revision: 1, rolledOut: true });
      }
    },
  );
});

/** Waits until what target `cluster` runs in `namespace` passes `check`. */
async function waitForTarget(
  cluster: string,
  namespace: string,
  check: (app: TargetApp) => boolean,
): Promise<TargetApp> {
  return until(
    `${cluster}/${namespace} runs what the test waits for`,
    async () => {
      const app = await targetApp(fleet.target(cluster), namespace);
      return check(app) && app;
    },
    { timeoutMs: 120_000, intervalMs: 250 },
  );
}
