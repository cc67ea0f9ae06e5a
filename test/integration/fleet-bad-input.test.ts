// ReleaseSet bad input on the real apiserver ("Bad input" and "minHealthyTime"): what the
// CRD refuses at admission names the field; what only the fleet function can judge (a matchLabels
// key, a template rendering an invalid Release, a step selecting no Cluster, two sets claiming one
// child name) gets Generated False with a reason and a message naming the field, and no child of
// any Cluster is written; overlapping overrides apply in order (later wins); a child deleted by
// hand is recreated (the relay wakes the set); a set deleted mid-rollout takes its children with it
// (garbage collection by ownerReferences) and the fleet function writes nothing for it, neither
// while it is being deleted nor after; and a soak (minHealthyTime) survives a restart of the
// runtime mid-soak: it ends at healthySince + minHealthyTime, not minHealthyTime after the restart.
// Children that cannot be written (the functions' ClusterRole without create/patch on releases)
// stop a rollout at RolloutSucceeded False/DeployFailed naming the child and the 403, retried until
// the permission is back.
//
// The runtime as `convoy dev` starts it (fleet-scenario.ts: relay, fauxqs, the fleet function and
// the Release loops as the install's identities). The Clusters are the management apiserver itself
// (inCluster), each child delivering a ConfigMap to the namespace its Cluster's `target` label names:
//
//   Cluster  labels                            Cluster  labels
//   c1       pool a, ring canary, target T1    x-1      pool dup, target T1
//   c2       pool a, ring rest, region eu, T2  1        pool dup, target T2
import { ApiException, CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { FleetAnnotation, FleetLabel } from '../../domain/fleet/labels.ts';
import { FUNCTIONS_ROLE_NAME } from '../../infra/functions-rbac.ts';
import { functionsMay, functionsToken, functionsUserName } from '../harness/functions-access.ts';
import { conditionOf } from '../harness/fleet.ts';
import { hasSucceeded, startFleetScenario, type FleetScenario } from '../harness/fleet-scenario.ts';
import { freshNamespace, type FreshNamespace } from '../harness/kube.ts';
import { until, type LogLine } from '../harness/runtime-env.ts';

let fleet: FleetScenario;
const targets: FreshNamespace[] = [];

const CLUSTERS: Record<string, Record<string, string>> = {
  c1: { pool: 'a', ring: 'canary' },
  c2: { pool: 'a', ring: 'rest', region: 'eu' },
  'x-1': { pool: 'dup' },
  '1': { pool: 'dup' },
};
const TARGET_OF: Record<string, number> = { c1: 0, c2: 1, 'x-1': 0, '1': 1 };

beforeAll(async () => {
  fleet = await startFleetScenario('fleet-bad', [], { register: false });
  targets.push(
    await freshNamespace(fleet.admin, 'fleet-bad-t1'),
    await freshNamespace(fleet.admin, 'fleet-bad-t2'),
  );
  for (const [name, labels] of Object.entries(CLUSTERS)) {
    await fleet.env.api.create(
      'Cluster',
      fleet.namespace,
      name,
      { inCluster: true },
      { labels: { ...labels, target: targets[TARGET_OF[name]].name } },
    );
  }
}, 120_000);

afterAll(async () => {
  await fleet?.close();
  for (const target of targets) await target.delete();
});

const child = (set: string, cluster: string) => `${set}-${cluster}`;

/** A repo `<set>` whose `app/` holds one ConfigMap `<set>-config`; the template delivers it to the Cluster's target namespace. */
async function template(set: string, spec: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const { url } = await fleet.env.repo(set, {
    'app/cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${set}-config}\ndata: {set: ${set}}\n`,
  });
  return {
    spec: {
      targetNamespace: '${cluster.labels.target}',
      source: { git: { url, path: 'app', ref: { branch: 'main' } } },
      ...spec,
    },
  };
}

/** The owner references of a Release as `<kind> <name> <uid>`. */
function ownersOf(release: Release | undefined): string[] {
  const refs =
    (release?.metadata as { ownerReferences?: { kind?: string; name?: string; uid?: string }[] } | undefined)
      ?.ownerReferences ?? [];
  return refs.map((r) => `${r.kind ?? '?'} ${r.name ?? '?'} ${r.uid ?? '?'}`);
}

async function childNames(set: string): Promise<string[]> {
  return [...(await fleet.sets.children(set)).keys()].sort();
}

/** Waits for Generated False/<reason> at the set's generation. */
function generatedFalse(set: string, reason: string): Promise<ReleaseSet> {
  return fleet.waitForSet(
    set,
    `Generated False/${reason}`,
    (s) => {
      const c = conditionOf(s, 'Generated');
      return (
        c?.status === 'False' && c.reason === reason && c.observedGeneration === s.metadata.generation && s
      );
    },
    60_000,
  );
}

const fleetLines = (set: string): LogLine[] =>
  fleet.env.logs.filter(
    (l) => l['loop'] === 'fleet' && l['namespace'] === fleet.namespace && l['name'] === set,
  );
const childWrittenSince = (set: string, since: number): LogLine[] =>
  fleetLines(set).filter((l) => l.msg === 'child written' && Date.parse(l.time) >= since);

/** Sends a fleet message naming `set` and `uid` and waits for the fleet function's verdict on it. */
async function sendAndWait(set: string, uid: string, cause: string): Promise<LogLine> {
  const [messageId] = await fleet.env.sendRaw('fleet', [
    fleet.env.messageBody(set, uid, `test: ${cause}`, 'fleet'),
  ]);
  return until(
    `the fleet function handled the message (${cause})`,
    () =>
      fleet.env.logs.find(
        (l) =>
          l['messageId'] === messageId &&
          ['dropped', 'done', 'requeued', 'stopped until the next interval or change'].includes(l.msg),
      ),
    { timeoutMs: 30_000 },
  );
}

describe('admission refuses a selector the CRD can check, naming the field (nothing is stored)', () => {
  const base = {
    clusters: { selector: { matchLabels: { pool: 'a' } } },
    template: {
      spec: { source: { git: { url: 'https://git.example.invalid/a.git', ref: { branch: 'main' } } } },
    },
  };
  const rows: { name: string; spec: Record<string, unknown>; field: string; reason: RegExp }[] = [
    {
      name: 'a matchLabels value that is not a label value',
      spec: { ...base, clusters: { selector: { matchLabels: { pool: 'not a value!' } } } },
      field: 'spec.clusters.selector.matchLabels.pool',
      reason: /should match/,
    },
    {
      name: 'a matchExpressions key that is not a label key',
      spec: {
        ...base,
        clusters: { selector: { matchExpressions: [{ key: 'bad key!', operator: 'Exists' }] } },
      },
      field: 'spec.clusters.selector.matchExpressions[0].key',
      reason: /should match/,
    },
    {
      name: 'an unknown operator',
      spec: {
        ...base,
        clusters: { selector: { matchExpressions: [{ key: 'pool', operator: 'Gt', values: ['1'] }] } },
      },
      field: 'spec.clusters.selector.matchExpressions[0].operator',
      reason: /Unsupported value: "Gt"/,
    },
    {
      name: "an override's Exists requirement with values",
      spec: {
        ...base,
        overrides: [
          {
            clusters: { matchExpressions: [{ key: 'region', operator: 'Exists', values: ['eu'] }] },
            spec: {},
          },
        ],
      },
      field: 'spec.overrides[0].clusters.matchExpressions[0]',
      reason: /values must be non-empty for In and NotIn, and absent for Exists and DoesNotExist/,
    },
    {
      name: "a step's In requirement without values",
      spec: {
        ...base,
        rollout: {
          steps: [{ name: 'canary', clusters: { matchExpressions: [{ key: 'ring', operator: 'In' }] } }],
        },
      },
      field: 'spec.rollout.steps[0].clusters.matchExpressions[0]',
      reason: /values must be non-empty for In and NotIn/,
    },
  ];
  for (const row of rows) {
    it(`refuses ${row.name}, naming ${row.field}`, async () => {
      const error = await fleet.sets.create('refused', row.spec).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ApiException);
      const body = JSON.parse((error as ApiException<string>).body) as { code: number; message: string };
      expect(body.code).toBe(422);
      expect(body.message).toContain(row.field);
      expect(body.message).toMatch(row.reason);
      const stored = await fleet.sets.get('refused').then(
        () => true,
        (e: unknown) => (e instanceof ApiException && e.code === 404 ? false : Promise.reject(e as Error)),
      );
      expect(stored).toBe(false);
    });
  }
});

describe('bad input only the fleet function can judge: Generated False naming the field, no child written', () => {
  it(
    'a matchLabels key that is not a label key (admission lets any key through), in spec.clusters, an override or a step: InvalidSpec naming the field',
    { timeout: 90_000 },
    async () => {
      const bad = { 'bad key!': 'x' };
      const cases: [string, (t: Record<string, unknown>) => Record<string, unknown>, string][] = [
        [
          'sel-clusters',
          (t) => ({ clusters: { selector: { matchLabels: bad } }, template: t }),
          'spec.clusters.selector.matchLabels: "bad key!" is not a label key',
        ],
        [
          'sel-override',
          (t) => ({
            clusters: { selector: { matchLabels: { pool: 'a' } } },
            template: t,
            overrides: [{ clusters: { matchLabels: bad }, spec: {} }],
          }),
          'spec.overrides[0].clusters.matchLabels: "bad key!" is not a label key',
        ],
        [
          'sel-step',
          (t) => ({
            clusters: { selector: { matchLabels: { pool: 'a' } } },
            template: t,
            rollout: { steps: [{ name: 'canary', clusters: { matchLabels: bad } }] },
          }),
          'spec.rollout.steps[0].clusters.matchLabels: "bad key!" is not a label key',
        ],
      ];
      for (const [name, spec] of cases) await fleet.sets.create(name, spec(await template(name)));
      for (const [name, , message] of cases) {
        const set = await generatedFalse(name, 'InvalidSpec');
        expect(conditionOf(set, 'Generated')?.message, name).toMatch(
          new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\[prefix/\\]name`),
        );
        expect(conditionOf(set, 'RolloutSucceeded'), name).toMatchObject({ status: 'Unknown' });
        expect(await childNames(name), name).toEqual([]);
      }
    },
  );

  it(
    'a template that renders an invalid Release for one Cluster (through an override), or has an unknown field: TemplateFailed naming the Cluster and the field; no child of any Cluster',
    { timeout: 90_000 },
    async () => {
      await fleet.sets.create('tpl-invalid', {
        clusters: { selector: { matchLabels: { pool: 'a' } } },
        template: await template('tpl-invalid'),
        overrides: [
          { clusters: { matchLabels: { region: 'eu' } }, spec: { syncPolicy: { interval: 'soon' } } },
        ],
      });
      await fleet.sets.create('tpl-unknown', {
        clusters: { selector: { matchLabels: { pool: 'a' } } },
        template: await template('tpl-unknown', { replicaCount: 3 }),
      });

      const invalid = await generatedFalse('tpl-invalid', 'TemplateFailed');
      expect(conditionOf(invalid, 'Generated')?.message).toMatch(
        /^Cluster c2: spec\.template\.spec\.syncPolicy\.interval: .*duration.* \(with spec\.overrides\[0\] applied\)$/,
      );
      // All or nothing: c1's child would be valid, and it is not written either.
      expect(await childNames('tpl-invalid')).toEqual([]);

      const unknown = await generatedFalse('tpl-unknown', 'TemplateFailed');
      expect(conditionOf(unknown, 'Generated')?.message).toBe(
        'Cluster c1: spec.template.spec.replicaCount: unknown field',
      );
      expect(await childNames('tpl-unknown')).toEqual([]);
      for (const set of ['tpl-invalid', 'tpl-unknown'])
        expect(fleetLines(set).filter((l) => l.msg === 'child written')).toEqual([]);
    },
  );

  it(
    'a step selecting no Cluster: InvalidSpec naming the step; not even the first step is written',
    { timeout: 90_000 },
    async () => {
      await fleet.sets.create('nostep', {
        clusters: { selector: { matchLabels: { pool: 'a' } } },
        template: await template('nostep'),
        rollout: {
          steps: [
            { name: 'canary', clusters: { matchLabels: { ring: 'canary' } } },
            { name: 'ghost', clusters: { matchLabels: { ring: 'nowhere' } } },
          ],
        },
      });
      const set = await generatedFalse('nostep', 'InvalidSpec');
      expect(conditionOf(set, 'Generated')?.message).toMatch(
        /^spec\.rollout\.steps\[1\]\.clusters: step ghost selects no Cluster of the set/,
      );
      expect(await childNames('nostep')).toEqual([]);
    },
  );

  it(
    'two sets claiming one child name (set dup + Cluster x-1, set dup-x + Cluster 1): the second stops with NameConflict naming the Release, its owner and the Cluster; the first keeps its child',
    { timeout: 120_000 },
    async () => {
      const first = await fleet.sets.create('dup', {
        clusters: { names: ['x-1'] },
        template: await template('dup'),
      });
      await fleet.succeeded('dup');
      const owned = await fleet.sets.release(child('dup', 'x-1'));
      expect(ownersOf(owned)).toEqual([`ReleaseSet dup ${first.metadata.uid ?? ''}`]);

      await fleet.sets.create('dup-x', { clusters: { names: ['1'] }, template: await template('dup-x') });
      const conflict = await generatedFalse('dup-x', 'NameConflict');
      const message = conditionOf(conflict, 'Generated')?.message ?? '';
      expect(message).toContain(
        'the child of Cluster 1 would be Release dup-x-1, but that name is taken by a Release owned by ReleaseSet dup',
      );
      expect(message).toContain('spec.clusters.exclude');
      expect(await childNames('dup-x')).toEqual([]);
      // The Release is still dup's, unchanged: its Cluster, its labels, its one owner.
      const after = await fleet.sets.release(child('dup', 'x-1'));
      expect(after?.metadata.generation).toBe(owned?.metadata.generation);
      expect(after?.spec.cluster.name).toBe('x-1');
      expect(after?.metadata.labels?.[FleetLabel.releaseSet]).toBe('dup');
      expect(ownersOf(after)).toEqual([`ReleaseSet dup ${first.metadata.uid ?? ''}`]);
      expect(hasSucceeded(await fleet.sets.get('dup'))).toBe(true);
    },
  );
});

describe('overrides, children and sets deleted', () => {
  it(
    'overlapping overrides apply in order (later wins, objects merge); a child deleted by hand is recreated when the relay wakes its set',
    { timeout: 180_000 },
    async () => {
      const {
        metadata: { uid: ovrUid = '' },
      } = await fleet.sets.create('ovr', {
        clusters: { selector: { matchLabels: { pool: 'a' } } },
        template: await template('ovr', { syncPolicy: { interval: '5m', waveTimeout: '7m' } }),
        overrides: [
          {
            clusters: { matchLabels: { pool: 'a' } },
            spec: { syncPolicy: { interval: '2m', waveTimeout: '4m' } },
          },
          { clusters: { matchLabels: { region: 'eu' } }, spec: { syncPolicy: { interval: '3m' } } },
        ],
      });
      await fleet.succeeded('ovr');
      const kids = await fleet.sets.children('ovr');
      expect(kids.get(child('ovr', 'c1'))?.spec.syncPolicy).toMatchObject({
        interval: '2m',
        waveTimeout: '4m',
      });
      expect(kids.get(child('ovr', 'c2'))?.spec.syncPolicy).toMatchObject({
        interval: '3m',
        waveTimeout: '4m',
      });

      const before = kids.get(child('ovr', 'c2'));
      const deletedAt = Date.now();
      await fleet.env.deleteRelease(child('ovr', 'c2'));
      // No message from the test: the relay sees the child go and wakes the set.
      const recreated = await until(
        'ovr-c2 is recreated',
        async () => {
          const r = await fleet.sets.release(child('ovr', 'c2'));
          return r !== undefined && r.metadata.uid !== before?.metadata.uid && r;
        },
        { timeoutMs: 60_000, intervalMs: 250 },
      );
      expect(recreated.spec.syncPolicy).toMatchObject({ interval: '3m', waveTimeout: '4m' });
      expect(ownersOf(recreated)).toEqual([`ReleaseSet ovr ${ovrUid}`]);
      expect(
        childWrittenSince('ovr', deletedAt).map((l) => [l['child'], l['action'], l['why']]),
      ).toContainEqual([child('ovr', 'c2'), 'apply', 'create']);
      // The rollout stays Succeeded (a revision's terminal state); the counts follow the new child until it is ready.
      const set = await fleet.waitForSet(
        'ovr',
        'both children ready again',
        (s) => hasSucceeded(s) && s.status?.clusters?.ready === 2 && s,
        60_000,
      );
      expect(set.status?.clusters).toMatchObject({
        selected: 2,
        updated: 2,
        ready: 2,
        waiting: 0,
        failed: 0,
      });
    },
  );

  it(
    'a set deleted mid-rollout: its children follow their ownerReferences, nothing is orphaned, and the fleet function writes nothing for it, while it is deleted or after',
    { timeout: 240_000 },
    async () => {
      // Two sets waiting for approval of their second step (their canary child written and ready):
      // gone-bg is deleted as `kubectl delete` does (background); gone-fg in the foreground, held by a
      // finalizer of the test so that the fleet function sees it with its deletionTimestamp.
      const spec = async (set: string) => ({
        clusters: { selector: { matchLabels: { pool: 'a' } } },
        template: await template(set),
        rollout: {
          steps: [
            { name: 'canary', clusters: { matchLabels: { ring: 'canary' } } },
            { name: 'rest', clusters: { matchLabels: { ring: 'rest' } }, approval: 'Required' },
          ],
        },
      });
      const sets = ['gone-bg', 'gone-fg'];
      const uids: Record<string, string> = {};
      for (const set of sets) uids[set] = (await fleet.sets.create(set, await spec(set))).metadata.uid ?? '';
      for (const set of sets) {
        await fleet.waitForSet(
          set,
          'WaitingForApproval of step rest',
          (s) =>
            s.status?.rollout?.state === 'WaitingForApproval' &&
            s.status.steps?.[0]?.state === 'Succeeded' &&
            s,
        );
        expect(await childNames(set)).toEqual([child(set, 'c1')]);
      }
      const raw = fleet.admin.makeApiClient(CustomObjectsApi);
      const base = {
        group: API_GROUP,
        version: API_VERSION,
        namespace: fleet.namespace,
        plural: 'releasesets',
      };
      const HOLD = 'convoy.test/hold';
      await fleet.sets.patch('gone-fg', { metadata: { finalizers: [HOLD] } });

      const deletedAt = Date.now();
      await fleet.sets.delete('gone-bg');
      await raw.deleteNamespacedCustomObject({ ...base, name: 'gone-fg', propagationPolicy: 'Foreground' });

      for (const set of sets)
        await until(
          `the children of ${set} are garbage-collected`,
          async () =>
            (await childNames(set)).length === 0 &&
            (await fleet.sets.release(child(set, 'c1'))) === undefined,
          { timeoutMs: 60_000, intervalMs: 250 },
        );

      // gone-fg stays (the test's finalizer), being deleted: its children's deletion woke it, and the
      // fleet function ran it and stopped at `deleting` (done, no decision, no write, not even status).
      const deleting = await until(
        'the fleet function ran gone-fg while it was being deleted',
        () => {
          const lines = fleetLines('gone-fg').filter((l) => Date.parse(l.time) >= deletedAt);
          const decided = new Set(lines.filter((l) => l.msg === 'fleet decided').map((l) => l['messageId']));
          return lines.find((l) => l.msg === 'done' && !decided.has(l['messageId']));
        },
        { timeoutMs: 60_000 },
      );
      expect(deleting).toBeDefined();
      const terminating = await fleet.sets.get('gone-fg');
      expect(terminating.metadata.deletionTimestamp).toBeDefined();
      // Its status is the one from before the deletion: the fleet function wrote none while it was being deleted.
      expect(terminating.status?.rollout?.state).toBe('WaitingForApproval');
      await until(
        'GC is done with gone-fg (only the test finalizer left)',
        async () => {
          const s = (await raw.getNamespacedCustomObject({ ...base, name: 'gone-fg' })) as {
            metadata: { finalizers?: string[] };
          };
          return JSON.stringify(s.metadata.finalizers ?? []) === JSON.stringify([HOLD]);
        },
        { timeoutMs: 30_000 },
      );
      expect(await childNames('gone-fg')).toEqual([]);
      await fleet.sets.patch('gone-fg', { metadata: { finalizers: null } });

      for (const set of sets) {
        await until(
          `${set} is gone`,
          () =>
            fleet.sets.get(set).then(
              () => false,
              (e: unknown) =>
                e instanceof ApiException && e.code === 404 ? true : Promise.reject(e as Error),
            ),
          { timeoutMs: 30_000 },
        );
        // A message for the set that is gone (as one sent before its deletion) is dropped and writes nothing.
        const verdict = await sendAndWait(set, uids[set], `a late message for the deleted ${set}`);
        expect(verdict.msg).toBe('dropped');
        expect(String(verdict['reason'])).toContain(`${set} does not exist`);
        expect(await childNames(set)).toEqual([]);
        expect(await fleet.sets.release(child(set, 'c1'))).toBeUndefined();
        expect(await fleet.sets.release(child(set, 'c2'))).toBeUndefined();
        expect(childWrittenSince(set, deletedAt), set).toEqual([]);
      }
    },
  );
});

describe("the children cannot be written (the functions' ClusterRole loses create/patch on releases)", () => {
  it(
    'a new revision stops at RolloutSucceeded False/DeployFailed naming the child and the 403 (no credential), retried with backoff, no child changed; restored, the rollout finishes',
    { timeout: 180_000 },
    async () => {
      const set = 'nowrite';
      const configMap = (revision: number) =>
        `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${set}-config}\ndata: {set: ${set}, revision: "${revision}"}\n`;
      const { url } = await fleet.env.repo(set, { 'app/cm.yaml': configMap(1) });
      await fleet.sets.create(set, {
        clusters: { selector: { matchLabels: { pool: 'a' } } },
        template: {
          spec: {
            targetNamespace: '${cluster.labels.target}',
            source: { git: { url, path: 'app', ref: { branch: 'main' } } },
          },
        },
        rollout: { steps: [{ name: 'canary', clusters: { matchLabels: { ring: 'canary' } } }] },
      });
      const first = await fleet.succeeded(set);
      const revision1 = first.status?.revision?.id ?? '';
      const written = async () =>
        [...(await fleet.sets.children(set)).values()]
          .map((r) => [
            r.metadata.name,
            r.metadata.generation,
            r.metadata.annotations?.[FleetAnnotation.revision],
          ])
          .sort();
      const before = await written();
      expect(before).toEqual([
        [child(set, 'c1'), 1, revision1],
        [child(set, 'c2'), 1, revision1],
      ]);
      const core = fleet.admin.makeApiClient(CoreV1Api);
      const deliveredRevision = async (cluster: string) =>
        (
          await core.readNamespacedConfigMap({
            namespace: targets[TARGET_OF[cluster]].name,
            name: `${set}-config`,
          })
        ).data?.['revision'];

      // The functions' own ClusterRole of this installation loses create and patch on releases (the
      // verbs of a server-side apply): the fleet function, acting as the functions' identity (never
      // admin), can read everything and write the set's status, but not its children.
      const rbac = fleet.admin.makeApiClient(RbacAuthorizationV1Api);
      const roleName = `${FUNCTIONS_ROLE_NAME}-${fleet.env.installation.name}`;
      const role = await rbac.readClusterRole({ name: roleName });
      const original = role.rules ?? [];
      const withoutWrites = original.map((rule) =>
        rule.apiGroups?.includes(API_GROUP) && rule.resources?.includes('releases')
          ? { ...rule, verbs: rule.verbs.filter((v) => v !== 'create' && v !== 'patch') }
          : rule,
      );
      expect(withoutWrites).not.toEqual(original);
      await fleet.env.commit(set, { 'app/cm.yaml': configMap(2) });
      await rbac.replaceClusterRole({ name: roleName, body: { ...role, rules: withoutWrites } });
      let failed: ReleaseSet;
      try {
        await until(
          'the functions may no longer patch releases',
          async () =>
            !(await functionsMay(fleet.env.functionsKc, {
              verb: 'patch',
              resource: 'releases',
              namespace: fleet.namespace,
            })),
          { timeoutMs: 10_000, intervalMs: 100 },
        );
        const since = Date.now();
        const runsBefore = fleet.fleetRuns(set);
        await fleet.kick(set, 'a new commit (as a Git webhook would), the children not writable');
        failed = await fleet.waitForSet(
          set,
          'RolloutSucceeded False/DeployFailed at revision 2',
          (s) =>
            conditionOf(s, 'RolloutSucceeded')?.reason === 'DeployFailed' &&
            s.status?.revision?.id !== revision1 &&
            s,
          60_000,
        );
        const message = conditionOf(failed, 'RolloutSucceeded')?.message ?? '';
        expect(conditionOf(failed, 'RolloutSucceeded')).toMatchObject({
          status: 'False',
          observedGeneration: failed.metadata.generation,
        });
        // It names the child and why: the apiserver's 403 for the functions' user, nothing of its credential.
        expect(message).toMatch(
          new RegExp(
            `^writing 1 of 1 child Releases failed \\(retried\\): ${child(set, 'c1')}: PATCH \\S+/releases/${child(set, 'c1')}: HTTP 403 Forbidden: `,
          ),
        );
        expect(message).toContain(
          `is forbidden: User "${await functionsUserName(fleet.env.functionsKc)}" cannot patch resource "releases" in API group "convoy.dev" in the namespace "${fleet.namespace}"`,
        );
        expect(message).not.toContain(functionsToken(fleet.env.functionsKc));
        // Only what the row says: Generated stays True, the status names the new revision with no Cluster updated.
        expect(conditionOf(failed, 'Generated')).toMatchObject({ status: 'True' });
        expect(failed.status?.lastSucceededRevision?.id).toBe(revision1);
        expect(failed.status?.clusters).toMatchObject({ selected: 2, updated: 0 });
        expect(failed.status?.rollout).toMatchObject({ state: 'Progressing', stepName: 'canary' });

        // Retried with backoff: the same message comes back (a higher receive count), and fails again.
        const retried = await until(
          'the failed message was received again and failed again',
          () => {
            const failures = fleetLines(set).filter(
              (l) => l.msg === 'failed; retrying with backoff' && Date.parse(l.time) >= since,
            );
            return (
              failures.find(
                (l) =>
                  Number(l['receiveCount']) >= 2 &&
                  failures.some(
                    (f) =>
                      f['messageId'] === l['messageId'] &&
                      Number(f['receiveCount']) < Number(l['receiveCount']),
                  ),
              ) ?? undefined
            );
          },
          { timeoutMs: 60_000 },
        );
        expect((retried['error'] as { message?: string }).message).toContain('DeployFailed');
        const decided = fleetLines(set).filter(
          (l) => l.msg === 'fleet decided' && Date.parse(l.time) >= since,
        );
        expect(decided.length).toBeGreaterThanOrEqual(2);
        expect(fleet.fleetRuns(set) - runsBefore).toBe(decided.length);
        expect(decided.every((l) => l['stop'] === 'writeFailed' && l['failedWrites'] === 1)).toBe(true);
        expect(childWrittenSince(set, since)).toEqual([]);
        expect(await written()).toEqual(before);
        for (const cluster of ['c1', 'c2']) expect(await deliveredRevision(cluster), cluster).toBe('1');
      } finally {
        const current = await rbac.readClusterRole({ name: roleName });
        await rbac.replaceClusterRole({ name: roleName, body: { ...current, rules: original } });
      }
      // Restored: the next retry writes the canary, and the rollout of revision 2 finishes.
      const done = await fleet.waitForSet(
        set,
        'revision 2 rolled out',
        (s) => hasSucceeded(s) && s.status?.lastSucceededRevision?.id === failed.status?.revision?.id && s,
        120_000,
      );
      expect(done.status?.clusters).toMatchObject({ selected: 2, updated: 2, ready: 2, failed: 0 });
      expect(await written()).toEqual([
        [child(set, 'c1'), 2, done.status?.revision?.id],
        [child(set, 'c2'), 2, done.status?.revision?.id],
      ]);
      for (const cluster of ['c1', 'c2']) expect(await deliveredRevision(cluster), cluster).toBe('2');
    },
  );
});

describe('minHealthyTime across a restart of the runtime', () => {
  it(
    'a restart mid-soak neither restarts nor skips the soak: healthySince is kept, the step finishes at healthySince + minHealthyTime, the next step runs',
    { timeout: 300_000 },
    async () => {
      // Long enough that the restart and the first run after it (~5–10 s quiet, ~20 s under a CPU
      // hog) land inside the soak with room to spare: the premise below is checked, not assumed.
      const SOAK_MS = 60_000;
      await fleet.sets.create('soak', {
        clusters: { selector: { matchLabels: { pool: 'a' } } },
        template: await template('soak'),
        rollout: {
          steps: [
            {
              name: 'canary',
              clusters: { matchLabels: { ring: 'canary' } },
              minHealthyTime: `${SOAK_MS / 1000}s`,
            },
          ],
        },
      });
      const soaking = await fleet.waitForSet(
        'soak',
        'the canary step soaks',
        (s) => s.status?.steps?.[0]?.state === 'Soaking' && s,
        120_000,
      );
      expect(conditionOf(soaking, 'RolloutSucceeded')).toMatchObject({
        status: 'False',
        reason: 'WaitingForMinHealthyTime',
      });
      const healthySince = soaking.status?.rollout?.healthySince ?? '';
      const soakStart = Date.parse(healthySince);
      expect(Number.isNaN(soakStart)).toBe(false);
      expect(await childNames('soak')).toEqual([child('soak', 'c1')]);

      // Stop the whole runtime (fauxqs with the soak's delayed recheck, the relay, the functions) and start it again.
      const runsBefore = fleet.fleetRuns('soak');
      await fleet.env.restart();

      // The restarted relay lists the set and sends it a message; that run resumes the soak where the status says.
      await until('the restarted runtime ran the set', () => fleet.fleetRuns('soak') > runsBefore, {
        timeoutMs: 30_000,
      });
      const firstAfter = fleetLines('soak').filter((l) => l.msg === 'fleet decided')[runsBefore];
      const resumed = await fleet.sets.get('soak');
      expect(Date.now()).toBeLessThan(soakStart + SOAK_MS); // still inside the soak: what follows is about resuming it
      expect(firstAfter?.['stop']).toBe('waitingForMinHealthyTime');
      expect(resumed.status?.rollout).toMatchObject({
        state: 'Progressing',
        step: 0,
        stepName: 'canary',
        healthySince,
      });
      expect(resumed.status?.steps?.[0]?.state).toBe('Soaking');
      expect(await childNames('soak')).toEqual([child('soak', 'c1')]);

      const done = await fleet.succeeded('soak', 120_000);
      const finishedAt = Date.parse(done.status?.steps?.[0]?.finishedAt ?? 'NaN');
      expect(finishedAt).toBeGreaterThanOrEqual(soakStart + SOAK_MS);
      const next = (await fleet.sets.children('soak')).get(child('soak', 'c2'));
      expect(Date.parse(next?.metadata.creationTimestamp ?? 'NaN')).toBeGreaterThanOrEqual(
        soakStart + SOAK_MS - 1_000,
      );
      expect(done.status?.steps?.map((s) => [s.name, s.state])).toEqual([
        ['canary', 'Succeeded'],
        ['(remaining)', 'Succeeded'],
      ]);
    },
  );
});
