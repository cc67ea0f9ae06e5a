// ReleaseSet rollouts on real apiservers, part 2: the stops of docs/fleet.md's table,
// the gates (pause, approval, soak, stepTimeout, maxFailures as a count and as a percentage), a
// user's pin on one child, Clusters joining mid-rollout and leaving (Delete and Orphan), and a
// Cluster list the fleet function cannot read (ClusterNotReady, nothing deleted).
// Same setting as fleet-rollout.test.ts (fleet-scenario.ts), with several Clusters per target:
//
//   Cluster  target  labels                    Cluster  target  labels
//   a1       t1      pool main, ring canary    z1       t2      pool main, ring late
//   b1       t2      pool main, ring wave      m1       t1      pool move, ring early
//   b2       t3      pool main, ring wave      m2       t2      pool move, ring late
//   b3       t1      pool main, ring bad       (m3      t3      pool move, ring late: joins)
//
// Steps of the main pool: canary (ring canary, maxConcurrent 1), wave (ring wave or bad), then
// (remaining) z1. Each child targets its own namespace `<set>-<cluster>` on its Cluster's target.
// The relay sends the sets their fleet messages; after a new commit of a set's source a test sends
// one (nothing watches a set's Git repository; as a Git webhook would).
import { CoreV1Api, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { FleetAnnotation, FleetLabel } from '../../domain/fleet/labels.ts';
import { FUNCTIONS_ROLE_NAME } from '../../infra/functions-rbac.ts';
import { functionsMay } from '../harness/functions-access.ts';
import {
  conditionOf,
  fleetChart,
  fleetTemplate,
  registerCluster,
  relabelCluster,
  targetApp,
} from '../harness/fleet.ts';
import { hasSucceeded, startFleetScenario, type FleetScenario } from '../harness/fleet-scenario.ts';
import { until } from '../harness/runtime-env.ts';

const CLUSTERS: Record<string, { target: string; labels: Record<string, string> }> = {
  a1: { target: 't1', labels: { pool: 'main', ring: 'canary' } },
  b1: { target: 't2', labels: { pool: 'main', ring: 'wave' } },
  b2: { target: 't3', labels: { pool: 'main', ring: 'wave' } },
  b3: { target: 't1', labels: { pool: 'main', ring: 'bad' } },
  z1: { target: 't2', labels: { pool: 'main', ring: 'late' } },
  m1: { target: 't1', labels: { pool: 'move', ring: 'early' } },
  m2: { target: 't2', labels: { pool: 'move', ring: 'late' } },
};
const MAIN = ['a1', 'b1', 'b2', 'b3', 'z1'] as const;
const JOINING = { name: 'm3', target: 't3', labels: { pool: 'move', ring: 'late' } } as const;

let fleet: FleetScenario;

beforeAll(async () => {
  fleet = await startFleetScenario(
    'fleet-gates',
    [
      { name: 't1', labels: {} },
      { name: 't2', labels: {} },
      { name: 't3', labels: {} },
    ],
    { register: false },
  );
  for (const [name, c] of Object.entries(CLUSTERS))
    await registerCluster(fleet.admin, fleet.namespace, fleet.target(c.target), { name, labels: c.labels });
}, 240_000);

afterAll(async () => {
  await fleet?.close();
});

const child = (set: string, cluster: string) => `${set}-${cluster}`;
const targetOf = (cluster: string) =>
  fleet.target(cluster === JOINING.name ? JOINING.target : (CLUSTERS[cluster]?.target ?? '?'));

/** A repo `set` with the chart at revision 1 and the namespace `<set>-<cluster>` on each Cluster's target. */
async function app(set: string, clusters: readonly string[]): Promise<{ url: string; commit: string }> {
  const repo = await fleet.env.repo(set, fleetChart({ revision: 1 }));
  for (const cluster of clusters)
    await targetOf(cluster)
      .kc.makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: child(set, cluster) } } });
  return repo;
}

function mainSpec(
  repoUrl: string,
  set: string,
  rollout: Record<string, unknown> = {},
  wave: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    clusters: { selector: { matchLabels: { pool: 'main' } } },
    template: fleetTemplate(repoUrl, `${set}-\${cluster.name}`),
    rollout: {
      steps: [
        { name: 'canary', clusters: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1 },
        {
          name: 'wave',
          clusters: { matchExpressions: [{ key: 'ring', operator: 'In', values: ['wave', 'bad'] }] },
          ...wave,
        },
      ],
      ...rollout,
    },
  };
}

const stepsOf = (set: ReleaseSet) => set.status?.steps?.map((s) => [s.name, s.state]);

async function childNames(set: string): Promise<string[]> {
  return [...(await fleet.sets.children(set)).keys()].sort();
}

describe('the stops of docs/fleet.md on the apiserver: nothing is written', () => {
  it('NoClusters: a selector no Cluster matches', { timeout: 120_000 }, async () => {
    const repo = await app('none', []);
    await fleet.sets.create('none', {
      ...mainSpec(repo.url, 'none'),
      clusters: { selector: { matchLabels: { pool: 'nowhere' } } },
      rollout: {},
    });
    const set = await fleet.waitForSet(
      'none',
      'Generated False/NoClusters',
      (s) => conditionOf(s, 'Generated')?.reason === 'NoClusters' && s,
    );
    expect(conditionOf(set, 'Generated')).toMatchObject({
      status: 'False',
      observedGeneration: set.metadata.generation,
    });
    expect(await childNames('none')).toEqual([]);
  });

  it(
    'TemplateFailed: a label the Cluster does not have, named with the Cluster and the field; no child of any Cluster',
    { timeout: 120_000 },
    async () => {
      const repo = await app('tf', []);
      const template = fleetTemplate(repo.url, 'tf-${cluster.name}');
      const values = (template['spec'] as { content: { helm: { values: Record<string, string> } } }).content
        .helm.values;
      values['zone'] = '${cluster.labels.zone}';
      await fleet.sets.create('tf', { clusters: { selector: { matchLabels: { pool: 'main' } } }, template });
      const set = await fleet.waitForSet(
        'tf',
        'Generated False/TemplateFailed',
        (s) => conditionOf(s, 'Generated')?.reason === 'TemplateFailed' && s,
      );
      const message = conditionOf(set, 'Generated')?.message ?? '';
      expect(message).toMatch(/Cluster (a1|b1|b2|b3|z1)/);
      expect(message).toContain('cluster.labels.zone');
      expect(await childNames('tf')).toEqual([]);
    },
  );

  it(
    'SourceNotReady: a repository that does not exist (retried; nothing written)',
    { timeout: 120_000 },
    async () => {
      await fleet.sets.create('nosrc', mainSpec(`${fleet.env.git.url}/missing.git`, 'nosrc'));
      const set = await fleet.waitForSet(
        'nosrc',
        'Generated False/SourceNotReady',
        (s) => conditionOf(s, 'Generated')?.reason === 'SourceNotReady' && s,
      );
      expect(conditionOf(set, 'Generated')?.message).toContain('spec.template.spec.source');
      expect(await childNames('nosrc')).toEqual([]);
    },
  );

  it(
    "NameConflict: a Release nobody owns already has a child's name; the set writes nothing and names it",
    { timeout: 120_000 },
    async () => {
      const repo = await app('nc', []);
      await fleet.env.api.create('Release', fleet.namespace, child('nc', 'b1'), {
        cluster: { name: 'b1' },
        suspend: true,
        source: { git: { url: repo.url, ref: { branch: 'main' } } },
      });
      await fleet.sets.create('nc', mainSpec(repo.url, 'nc'));
      const set = await fleet.waitForSet(
        'nc',
        'Generated False/NameConflict',
        (s) => conditionOf(s, 'Generated')?.reason === 'NameConflict' && s,
      );
      expect(conditionOf(set, 'Generated')?.message).toContain(child('nc', 'b1'));
      expect(await childNames('nc')).toEqual([]);
      expect((await fleet.sets.release(child('nc', 'b1')))?.metadata.ownerReferences ?? []).toEqual([]);
    },
  );
});

describe('gates', () => {
  it(
    'paused writes nothing; unpaused, the canary goes; a step with approval waits for convoy.dev/approve=<step>@<revision> naming it, then goes on',
    { timeout: 300_000 },
    async () => {
      const set = 'gate';
      const repo = await app(set, MAIN);
      await fleet.sets.create(set, mainSpec(repo.url, set, { paused: true }, { approval: 'Required' }));
      const paused = await fleet.waitForSet(set, 'Paused', (s) => s.status?.rollout?.state === 'Paused' && s);
      expect(conditionOf(paused, 'RolloutSucceeded')).toMatchObject({ status: 'False', reason: 'Paused' });
      expect(await childNames(set)).toEqual([]);

      await fleet.sets.patch(set, { spec: { rollout: { paused: false } } });
      const waiting = await fleet.waitForSet(
        set,
        'WaitingForApproval at wave',
        (s) => s.status?.rollout?.state === 'WaitingForApproval' && s,
      );
      const id = waiting.status?.revision?.id ?? '';
      expect(waiting.status?.rollout?.stepName).toBe('wave');
      expect(conditionOf(waiting, 'RolloutSucceeded')).toMatchObject({
        status: 'False',
        reason: 'WaitingForApproval',
      });
      expect(conditionOf(waiting, 'RolloutSucceeded')?.message).toContain(`convoy.dev/approve=wave@${id}`);
      expect(stepsOf(waiting)).toEqual([
        ['canary', 'Succeeded'],
        ['wave', 'WaitingForApproval'],
        ['(remaining)', 'Pending'],
      ]);
      expect(await childNames(set)).toEqual([child(set, 'a1')]);

      // An approval of another revision is not one.
      const runs = fleet.fleetRuns(set);
      await fleet.sets.patch(set, {
        metadata: { annotations: { [FleetAnnotation.approve]: 'wave@0000000000000000' } },
      });
      await until('the fleet function ran after the wrong approval', () => fleet.fleetRuns(set) > runs, {
        timeoutMs: 60_000,
      });
      expect((await fleet.sets.get(set)).status?.rollout?.state).toBe('WaitingForApproval');
      expect(await childNames(set)).toEqual([child(set, 'a1')]);

      await fleet.sets.patch(set, { metadata: { annotations: { [FleetAnnotation.approve]: `wave@${id}` } } });
      const done = await fleet.succeeded(set);
      expect(stepsOf(done)).toEqual([
        ['canary', 'Succeeded'],
        ['wave', 'Succeeded'],
        ['(remaining)', 'Succeeded'],
      ]);
      expect(await childNames(set)).toEqual(MAIN.map((c) => child(set, c)));
    },
  );

  it(
    'minHealthyTime: the next step starts only after the step stayed ready for the soak',
    { timeout: 300_000 },
    async () => {
      const set = 'soak';
      const repo = await app(set, MAIN);
      await fleet.sets.create(set, mainSpec(repo.url, set, { minHealthyTime: '15s' }));
      const soaking = await fleet.waitForSet(
        set,
        'the canary step soaks',
        (s) => s.status?.steps?.[0]?.state === 'Soaking' && s,
      );
      expect(conditionOf(soaking, 'RolloutSucceeded')).toMatchObject({
        status: 'False',
        reason: 'WaitingForMinHealthyTime',
      });
      const healthySince = Date.parse(soaking.status?.rollout?.healthySince ?? 'NaN');
      expect(Number.isNaN(healthySince)).toBe(false);
      expect(await childNames(set)).toEqual([child(set, 'a1')]);

      await fleet.succeeded(set);
      const kids = await fleet.sets.children(set);
      for (const cluster of ['b1', 'b2', 'b3']) {
        const created = Date.parse(kids.get(child(set, cluster))?.metadata.creationTimestamp ?? 'NaN');
        expect(created, cluster).toBeGreaterThanOrEqual(healthySince + 15_000 - 1_000);
      }
    },
  );

  it(
    'maxFailures as a count tolerates one failed Cluster in a step (the rollout goes on); as a percentage it rounds down (33% of 3 = 0: halted)',
    { timeout: 420_000 },
    async () => {
      const [count, percent] = ['mfc', 'mfp'];
      const [repoC, repoP] = [await app(count, MAIN), await app(percent, MAIN)];
      await fleet.sets.create(count, mainSpec(repoC.url, count, {}, { maxFailures: 1 }));
      await fleet.sets.create(percent, mainSpec(repoP.url, percent, {}, { maxFailures: '33%' }));
      await Promise.all([fleet.succeeded(count), fleet.succeeded(percent)]);
      const zBefore = (await fleet.sets.children(percent)).get(child(percent, 'z1'));

      // Revision 2 fails on ring bad (b3, in step wave).
      for (const set of [count, percent]) {
        await fleet.commitRevision(set, { revision: 2, failRings: ['bad'] });
        await fleet.kick(set, 'a new commit (as a Git webhook would)');
      }
      const [tolerated, halted] = await Promise.all([
        fleet.waitForSet(
          count,
          'revision 2 succeeded with b3 failed',
          (s) =>
            hasSucceeded(s) &&
            s.status?.revision?.id !== undefined &&
            s.status.lastSucceededRevision?.id === s.status.revision.id &&
            s.status.clusters?.failed === 1 &&
            s,
        ),
        fleet.waitForSet(
          percent,
          'revision 2 halted at wave',
          (s) => s.status?.rollout?.state === 'Halted' && s,
        ),
      ]);
      expect(tolerated.status?.failing).toEqual([
        expect.objectContaining({ cluster: 'b3', signal: 'Healthy', reason: 'Degraded' }),
      ]);
      expect(await targetApp(targetOf('z1'), child(count, 'z1'))).toMatchObject({
        revision: 2,
        rolledOut: true,
      });

      expect(conditionOf(halted, 'RolloutSucceeded')).toMatchObject({
        status: 'False',
        reason: 'StepFailed',
      });
      expect(halted.status?.rollout?.stepName).toBe('wave');
      expect(halted.status?.failing).toEqual([expect.objectContaining({ cluster: 'b3' })]);
      const zAfter = (await fleet.sets.children(percent)).get(child(percent, 'z1'));
      expect(zAfter?.metadata.generation).toBe(zBefore?.metadata.generation);
      expect(zAfter?.metadata.annotations?.[FleetAnnotation.revision]).toBe(
        zBefore?.metadata.annotations?.[FleetAnnotation.revision],
      );
      expect(await targetApp(targetOf('z1'), child(percent, 'z1'))).toMatchObject({
        revision: 1,
        rolledOut: true,
      });
    },
  );

  it(
    'stepTimeout: a canary that stays Progressing (a wait, not a failure) fails its step once the timeout passed',
    { timeout: 300_000 },
    async () => {
      const set = 'slow';
      const repo = await app(set, MAIN);
      await fleet.sets.create(set, mainSpec(repo.url, set));
      await fleet.succeeded(set);
      // The rollout knobs are not part of the revision: a shorter timeout for the next rollout.
      await fleet.sets.patch(set, { spec: { rollout: { stepTimeout: '20s' } } });
      await fleet.succeeded(set);
      await fleet.commitRevision(set, { revision: 2, failRings: ['canary'], progressDeadlineSeconds: 600 });
      await fleet.kick(set, 'a new commit (as a Git webhook would)');
      // The deadline passes with nothing changing anywhere, so only the fleet function's own recheck
      // (a delayed message, at most until the deadline) can notice it — also after the relay's
      // messages for the child's verdict changes ran in between (the recheck stays the Lease's
      // follow-up through resends: test/integration/lease-follow-up.test.ts). No nudges.
      const halted = await fleet.waitForSet(
        set,
        'halted by stepTimeout',
        (s) => s.status?.rollout?.state === 'Halted' && s,
        180_000,
      );
      expect(conditionOf(halted, 'RolloutSucceeded')).toMatchObject({
        status: 'False',
        reason: 'StepFailed',
      });
      expect(conditionOf(halted, 'RolloutSucceeded')?.message).toContain('stepTimeout');
      expect(halted.status?.failing).toEqual([expect.objectContaining({ cluster: 'a1' })]);
      // It was a wait until the deadline: the child's own verdict is not a failure.
      expect(await targetApp(targetOf('a1'), child(set, 'a1'))).toMatchObject({
        revision: 2,
        rolledOut: false,
      });
      expect(await targetApp(targetOf('b1'), child(set, 'b1'))).toMatchObject({
        revision: 1,
        rolledOut: true,
      });
    },
  );

  it(
    'a child its user pinned is held: not updated, listed in status.held, and it does not block its step',
    { timeout: 300_000 },
    async () => {
      const set = 'held';
      const repo = await app(set, MAIN);
      await fleet.sets.create(set, mainSpec(repo.url, set));
      await fleet.succeeded(set);
      const b1 = (await fleet.sets.children(set)).get(child(set, 'b1'))!;
      const pinnedRender = b1.status?.lastSuccessful?.renderRef ?? '';
      expect(pinnedRender).not.toBe('');
      await fleet.sets.patchRelease(child(set, 'b1'), {
        metadata: { annotations: { 'convoy.dev/pin': pinnedRender } },
      });

      await fleet.commitRevision(set, { revision: 2 });
      await fleet.kick(set, 'a new commit (as a Git webhook would)');
      const done = await fleet.waitForSet(
        set,
        'revision 2 rolled out around the held child',
        (s) =>
          hasSucceeded(s) &&
          s.status?.lastSucceededRevision?.id === s.status?.revision?.id &&
          (s.status?.held?.length ?? 0) > 0 &&
          s,
      );
      expect(done.status?.held).toEqual([
        { cluster: 'b1', release: child(set, 'b1'), reason: 'PinnedByUser' },
      ]);
      const after = (await fleet.sets.children(set)).get(child(set, 'b1'))!;
      expect(after.metadata.annotations?.['convoy.dev/pin']).toBe(pinnedRender);
      expect(after.metadata.annotations?.[FleetAnnotation.revision]).toBe(
        b1.metadata.annotations?.[FleetAnnotation.revision],
      );
      expect(after.metadata.generation).toBe(b1.metadata.generation);
      expect(await targetApp(targetOf('b1'), child(set, 'b1'))).toMatchObject({ revision: 1 });
      for (const cluster of ['a1', 'b2', 'b3', 'z1'])
        expect(await targetApp(targetOf(cluster), child(set, cluster)), cluster).toMatchObject({
          revision: 2,
          rolledOut: true,
        });
    },
  );
});

describe('Clusters joining and leaving', () => {
  it(
    'a Cluster joining mid-rollout is rolled out in its step; one leaving has its child deleted (onRemoval Delete) or orphaned (Orphan)',
    { timeout: 360_000 },
    async () => {
      const [del, orphan] = ['mvd', 'mvo'];
      const all = ['m1', 'm2', JOINING.name];
      const [repoD, repoO] = [await app(del, all), await app(orphan, all)];
      const spec = (url: string, set: string, onRemoval: string) => ({
        clusters: { selector: { matchLabels: { pool: 'move' } }, onRemoval },
        template: fleetTemplate(url, `${set}-\${cluster.name}`),
        rollout: {
          steps: [
            { name: 'first', clusters: { matchLabels: { ring: 'early' } } },
            { name: 'second', clusters: { matchLabels: { ring: 'late' } }, approval: 'Required' },
          ],
        },
      });
      await fleet.sets.create(del, spec(repoD.url, del, 'Delete'));
      await fleet.sets.create(orphan, spec(repoO.url, orphan, 'Orphan'));
      const waiting = await fleet.waitForSet(
        del,
        'WaitingForApproval at second',
        (s) => s.status?.rollout?.state === 'WaitingForApproval' && s,
      );
      expect(waiting.status?.steps?.find((s) => s.name === 'second')?.clusters).toBe(1);

      // m3 joins while the rollout waits at step second: it is part of that step.
      await registerCluster(fleet.admin, fleet.namespace, fleet.target(JOINING.target), {
        name: JOINING.name,
        labels: JOINING.labels,
      });
      const joined = await fleet.waitForSet(
        del,
        'm3 counted in step second',
        (s) => s.status?.steps?.find((st) => st.name === 'second')?.clusters === 2 && s,
      );
      expect(joined.status?.clusters?.selected).toBe(3);
      expect(await childNames(del)).toEqual([child(del, 'm1')]);
      for (const [set, w] of [
        [del, joined],
        [orphan, undefined],
      ] as const) {
        const id =
          (
            w ??
            (await fleet.waitForSet(
              set,
              'WaitingForApproval',
              (s) => s.status?.rollout?.state === 'WaitingForApproval' && s,
            ))
          ).status?.revision?.id ?? '';
        await fleet.sets.patch(set, {
          metadata: { annotations: { [FleetAnnotation.approve]: `second@${id}` } },
        });
      }
      const [doneD] = await Promise.all([fleet.succeeded(del), fleet.succeeded(orphan)]);
      expect(doneD.status?.clusters).toMatchObject({ selected: 3, ready: 3 });
      expect(await childNames(del)).toEqual(all.map((c) => child(del, c)).sort());
      expect(await targetApp(targetOf(JOINING.name), child(del, JOINING.name))).toMatchObject({
        revision: 1,
        ring: 'late',
        rolledOut: true,
      });

      // m2 leaves the pool.
      await relabelCluster(fleet.admin, fleet.namespace, 'm2', { pool: 'elsewhere' });
      await fleet.waitForSet(del, 'm2 no longer selected', (s) => s.status?.clusters?.selected === 2 && s);
      await fleet.waitForSet(orphan, 'm2 no longer selected', (s) => s.status?.clusters?.selected === 2 && s);
      await until(
        'the child of m2 is deleted',
        async () => (await fleet.sets.release(child(del, 'm2'))) === undefined,
        { timeoutMs: 60_000 },
      );
      const orphaned = await fleet.sets.release(child(orphan, 'm2'));
      expect(orphaned).toBeDefined();
      expect(orphaned?.metadata.ownerReferences ?? []).toEqual([]);
      expect(orphaned?.metadata.labels?.[FleetLabel.releaseSet]).toBe(orphan);
    },
  );
});

describe('a Cluster list the fleet function cannot read', () => {
  it(
    'stops the set with Generated False/ClusterNotReady (retried) and deletes nothing; readable again, the set goes on',
    { timeout: 300_000 },
    async () => {
      const set = 'blind';
      const repo = await app(set, MAIN);
      await fleet.sets.create(set, mainSpec(repo.url, set));
      await fleet.succeeded(set);
      const before = await childNames(set);
      expect(before).toHaveLength(MAIN.length);

      // The functions' own ClusterRole of this installation loses `list clusters`: the fleet function,
      // acting as the functions' identity (never admin), cannot read the Clusters of the namespace.
      const rbac = fleet.admin.makeApiClient(RbacAuthorizationV1Api);
      const roleName = `${FUNCTIONS_ROLE_NAME}-${fleet.env.installation.name}`;
      const role = await rbac.readClusterRole({ name: roleName });
      const original = role.rules ?? [];
      const withoutList = original.map((rule) =>
        rule.apiGroups?.includes('convoy.dev') && rule.resources?.includes('clusters')
          ? { ...rule, verbs: rule.verbs.filter((v) => v !== 'list') }
          : rule,
      );
      expect(withoutList).not.toEqual(original);
      await rbac.replaceClusterRole({ name: roleName, body: { ...role, rules: withoutList } });
      try {
        // The apiserver's authorizer learns the new role from its own watch: under load that takes a
        // moment, and a run before it would still list the Clusters (and end Succeeded, unwoken).
        const mayList = () =>
          functionsMay(fleet.env.functionsKc, {
            verb: 'list',
            resource: 'clusters',
            namespace: fleet.namespace,
          });
        await until('the functions may no longer list clusters', async () => !(await mayList()), {
          timeoutMs: 30_000,
          intervalMs: 100,
        });
        await fleet.kick(set, 'look again with the Cluster list refused');
        const blind = await fleet.waitForSet(
          set,
          'Generated False/ClusterNotReady',
          (s) => conditionOf(s, 'Generated')?.reason === 'ClusterNotReady' && s,
        );
        expect(conditionOf(blind, 'Generated')).toMatchObject({ status: 'False' });
        expect(conditionOf(blind, 'Generated')?.message).toContain('nothing is deleted');
        expect(await childNames(set)).toEqual(before);
      } finally {
        const current = await rbac.readClusterRole({ name: roleName });
        await rbac.replaceClusterRole({ name: roleName, body: { ...current, rules: original } });
      }
      await fleet.waitForSet(
        set,
        'Generated True again',
        (s) => conditionOf(s, 'Generated')?.status === 'True' && hasSucceeded(s) && s,
      );
      expect(await childNames(set)).toEqual(before);
    },
  );
});
