/**
 * The ReleaseSet operator surface on the real apiserver, as a tenant: the
 * `convoy` CLI run as a child process with the tenant's own kubeconfig (a ServiceAccount token
 * whose Role allows ReleaseSets in ITS namespace only), and the relay's HTTP API with the same
 * token. The tenant can get, describe, wait for, approve, pause/resume and roll back a set in its
 * namespace, and gets a clear 403/Forbidden for the same set in another namespace.
 *
 * The fleet function is being built in parallel: the sets' status is written straight to /status
 * by the field manager that function uses (convoy-releaseset), its children and Events as it would
 * write them (test/harness/release-set-fixture.ts). What is tested is the operator surface.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP } from '../../domain/api/common.ts';
import type { ServedApi } from '../../relay/http/serve.ts';
import { runConvoy } from '../harness/cli.ts';
import { serveDashboard, serviceAccountUser, type ServiceAccountUser } from '../harness/dashboard.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi } from '../harness/releases.ts';
import {
  createWaitingSet,
  REVISION_A,
  REVISION_B,
  succeededStatus,
  tokenKubeconfig,
  waitingStatus,
  writeSetStatus,
} from '../harness/release-set-fixture.ts';

interface SetObject {
  metadata: { annotations?: Record<string, string>; generation: number };
  spec: { rollout: { paused: boolean } };
}

describe('ReleaseSets for a tenant: the CLI and the HTTP API', { timeout: 120_000 }, () => {
  const admin = kubeConfigFor(inject('kubeconfigPath'));
  const convoy = convoyApi(admin);
  let mine: FreshNamespace;
  let other: FreshNamespace;
  let tenant: ServiceAccountUser;
  let kubeconfig: string;
  let dir: string;
  let api: ServedApi;
  const cli = (...args: string[]) => runConvoy(args, kubeconfig);
  const readSet = async (ns: string, name = 'web') =>
    (await convoy.get('ReleaseSet', ns, name)) as unknown as SetObject;
  const http = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${tenant.token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    [mine, other] = await Promise.all([
      freshNamespace(admin, 'rset-ops'),
      freshNamespace(admin, 'rset-ops-other'),
    ]);
    await Promise.all([createWaitingSet(admin, mine.name), createWaitingSet(admin, other.name)]);
    tenant = await serviceAccountUser(admin, mine.name, 'rset-tenant', [
      {
        namespace: mine.name,
        rules: [
          { apiGroups: [API_GROUP], resources: ['releasesets'], verbs: ['get', 'list', 'update', 'patch'] },
          { apiGroups: [API_GROUP], resources: ['releases'], verbs: ['get', 'list'] },
          { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['list'] },
        ],
      },
    ]);
    dir = await mkdtemp(join(tmpdir(), 'convoy-rset-ops-'));
    kubeconfig = await tokenKubeconfig(admin, tenant.token, dir, 'tenant.yaml');
    api = await serveDashboard(admin);
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await Promise.all([mine?.delete(), other?.delete()]);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('get rset lists the set with its rollout; -o json prints the object; describe shows steps, counts, failing, held, children and Events', async () => {
    const list = await cli('get', 'rset', '-n', mine.name);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    const [header, row] = list.stdout.trim().split('\n');
    expect(header).toMatch(/^NAME\s+STATE\s+STEP\s+UPDATED\/SELECTED\s+READY\s+FAILED\s+REVISION\s+AGE$/);
    expect(row).toMatch(
      new RegExp(
        `^web\\s+WaitingForApproval\\s+eu \\(2/2\\)\\s+1/3\\s+0\\s+1\\s+${REVISION_B.id}\\s+\\d+[smhd]$`,
      ),
    );
    const json = JSON.parse(
      (await cli('get', 'rset', 'web', '-n', mine.name, '-o', 'json')).stdout,
    ) as Record<string, unknown>;
    expect(json).toMatchObject({
      apiVersion: 'convoy.dev/v1alpha1',
      kind: 'ReleaseSet',
      metadata: { name: 'web' },
      status: { revision: { id: REVISION_B.id } },
    });
    expect((json.metadata as Record<string, unknown>).managedFields).toBeUndefined();

    const d = await cli('describe', `rset/web`, '-n', mine.name);
    expect(d.stderr).toBe('');
    expect(d.code).toBe(0);
    expect(d.stdout).toMatch(
      /^Verdict:\s+WaitingForApproval: revision bbbbbbbbbbbbbbbb: WaitingForApproval: step eu \(2 Clusters\) needs approval/m,
    );
    expect(d.stdout).toContain(
      `Last succeeded: ${REVISION_A.id} (git https://git.example.invalid/apps.git@aaaaaaaaaaaa)`,
    );
    expect(d.stdout).toMatch(/^Clusters:\s+3 selected, 1 updated, 0 ready, 1 failed, 2 waiting$/m);
    expect(d.stdout).toContain(`Approve:     convoy approve rset/web -n ${mine.name} --step eu`);
    expect(d.stdout).toMatch(/^\s+canary\s+1\s+1\s+0\s+1\s+Succeeded\s+2026-01-01T12:00:00Z$/m);
    expect(d.stdout).toMatch(/^\s+eu\s+2\s+0\s+0\s+0\s+WaitingForApproval\s+-$/m);
    expect(d.stdout).toMatch(/^\s+Healthy\s+2\s+1\s+0$/m);
    expect(d.stdout).toMatch(
      /^\s+canary-1\s+web-canary-1\s+Healthy\s+Degraded\s+2026-01-01T12:00:00Z\s+Deployment web\/web: 0\/3 replicas available$/m,
    );
    expect(d.stdout).toMatch(/^\s+eu-2\s+web-eu-2\s+PinnedByUser$/m);
    expect(d.stdout).toMatch(new RegExp(`^\\s+web-canary-1\\s+canary-1\\s+${REVISION_B.id}\\s+Waiting`, 'm'));
    expect(d.stdout).toMatch(new RegExp(`^\\s+web-eu-1\\s+eu-1\\s+${REVISION_A.id}\\s+`, 'm'));
    expect(d.stdout).toMatch(
      /^\s+\d+[smhd]\s+Normal\s+StepStarted\s+convoy\.dev\/fleet\s+1\s+step canary started/m,
    );
    const events = await cli('events', 'rset/web', '-n', mine.name, '-o', 'json');
    expect(events.code).toBe(0);
    expect((JSON.parse(events.stdout) as { reason: string }[]).map((e) => e.reason)).toEqual(['StepStarted']);
  });

  it('wait rset: WaitingForApproval ends at once with exit 4 naming the approve command (Succeeded and RolledBack: below)', async () => {
    const held = await cli('wait', `rset/${mine.name}/web`, '--timeout', '60s');
    expect(held.code).toBe(4);
    expect(held.stdout).toBe('');
    expect(held.stderr.trim()).toBe(
      `convoy: ${mine.name}/web waits for approval of step eu (revision ${REVISION_B.id}): approve it with \`convoy approve rset/web -n ${mine.name} --step eu\` and wait again`,
    );
    expect(held.ms).toBeLessThan(30_000);
  });

  it('approve rset: refuses a step that is not waiting, then writes convoy.dev/approve=<step>@<revision> for the waiting one', async () => {
    const wrong = await cli('approve', 'rset/web', '-n', mine.name, '--step', 'canary');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim()).toBe(
      `convoy: step canary of ReleaseSet ${mine.name}/web does not wait for approval: step eu does (convoy describe rset/<name> shows the rollout)`,
    );
    expect((await readSet(mine.name)).metadata.annotations?.['convoy.dev/approve']).toBeUndefined();
    const ok = await cli('approve', 'rset/web', '-n', mine.name);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout.trim()).toBe(
      `${mine.name}/web: step eu approved (convoy.dev/approve=eu@${REVISION_B.id})`,
    );
    expect((await readSet(mine.name)).metadata.annotations?.['convoy.dev/approve']).toBe(
      `eu@${REVISION_B.id}`,
    );
  });

  it('rollback rset writes convoy.dev/rollback=<current revision>; refused when nothing older succeeded; wait then follows the verdict', async () => {
    const run = await cli('rollback', 'rset/web', '-n', mine.name);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(
      `${mine.name}/web: rollback of revision ${REVISION_B.id} to ${REVISION_A.id} requested (convoy.dev/rollback=${REVISION_B.id}); convoy describe rset/web -n ${mine.name} shows it`,
    );
    expect((await readSet(mine.name)).metadata.annotations?.['convoy.dev/rollback']).toBe(REVISION_B.id);
    // The fleet function's answer (written here as it would write it): RolledBack → wait exits 1.
    await writeSetStatus(admin, mine.name, 'web', (g) => ({
      ...waitingStatus(g),
      rollout: { state: 'RolledBack', step: 1, stepName: 'eu' },
      conditions: [
        waitingStatus(g).conditions![0],
        {
          type: 'RolloutSucceeded',
          status: 'False',
          reason: 'RollbackRequested',
          message: `rollback requested (convoy.dev/rollback=${REVISION_B.id}): rolled back 1 Clusters to revision ${REVISION_A.id} (lastSucceededRevision)`,
          lastTransitionTime: '2026-01-01T12:00:00Z',
          observedGeneration: g,
        },
      ],
    }));
    const rolled = await cli('wait', 'rset/web', '-n', mine.name, '--timeout', '60s');
    expect(rolled.code).toBe(1);
    expect(rolled.stderr.trim()).toBe(
      `convoy: ${mine.name}/web: RolledBack: revision ${REVISION_B.id}: RollbackRequested: rollback requested (convoy.dev/rollback=${REVISION_B.id}): rolled back 1 Clusters to revision ${REVISION_A.id} (lastSucceededRevision)`,
    );
    // Succeeded for the current generation → 0; now B is the last that succeeded: nothing older, refused, nothing written.
    await writeSetStatus(admin, mine.name, 'web', succeededStatus);
    const done = await cli('wait', 'rset/web', '-n', mine.name, '--timeout', '60s');
    expect(done.code).toBe(0);
    expect(done.stdout.trim()).toMatch(
      /^Succeeded: revision bbbbbbbbbbbbbbbb: revision bbbbbbbbbbbbbbbb is rolled out/,
    );
    await convoy.patchMerge('ReleaseSet', mine.name, 'web', {
      metadata: { annotations: { 'convoy.dev/rollback': null } },
    });
    const refused = await cli('rollback', 'rset/web', '-n', mine.name);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      `convoy: ReleaseSet ${mine.name}/web cannot roll back: its current revision ${REVISION_B.id} is the last that succeeded, so there is nothing older to go back to`,
    );
    expect((await readSet(mine.name)).metadata.annotations?.['convoy.dev/rollback']).toBeUndefined();
  });

  it('pause and resume rset set spec.rollout.paused; wait on a paused set exits 4 naming convoy resume', async () => {
    const pause = await cli('pause', 'rset/web', '-n', mine.name);
    expect(pause.code).toBe(0);
    expect(pause.stdout.trim()).toBe(
      `${mine.name}/web paused: no child Release is written or deleted until convoy resume rset/web`,
    );
    expect((await readSet(mine.name)).spec.rollout.paused).toBe(true);
    await writeSetStatus(admin, mine.name, 'web', (g) => ({
      ...waitingStatus(g),
      rollout: { state: 'Paused', step: 1, stepName: 'eu' },
      conditions: [
        waitingStatus(g).conditions![0],
        {
          type: 'RolloutSucceeded',
          status: 'False',
          reason: 'Paused',
          message: 'spec.rollout.paused is true',
          lastTransitionTime: '2026-01-01T12:00:00Z',
          observedGeneration: g,
        },
      ],
    }));
    const held = await cli('wait', 'rset/web', '-n', mine.name);
    expect(held.code).toBe(4);
    expect(held.stderr.trim()).toBe(
      `convoy: ${mine.name}/web is paused (spec.rollout.paused: true): nothing is written until it is resumed, so waiting would never end; resume it with \`convoy resume rset/web -n ${mine.name}\` and wait again`,
    );
    const resume = await cli('resume', 'rset/web', '-n', mine.name);
    expect(resume.code).toBe(0);
    expect((await readSet(mine.name)).spec.rollout.paused).toBe(false);
  });

  it('describe rset for a user who may read the set but not list its Releases or Events: the set, and why those sections are empty', async () => {
    const reader = await serviceAccountUser(admin, mine.name, 'rset-reader', [
      {
        namespace: mine.name,
        rules: [{ apiGroups: [API_GROUP], resources: ['releasesets'], verbs: ['get'] }],
      },
    ]);
    const run = await runConvoy(
      ['describe', 'rset/web', '-n', mine.name],
      await tokenKubeconfig(admin, reader.token, dir, 'reader.yaml'),
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Clusters:\s+3 selected/m);
    expect(run.stdout).toContain(
      `Children:    (forbidden: you may not list releases.convoy.dev in namespace ${mine.name})`,
    );
    expect(run.stdout).toContain(
      `Events:\n  forbidden: you may not list events.events.k8s.io in namespace ${mine.name}`,
    );
  });

  it("another namespace's set: every CLI verb gets one clear 403 line, nothing is changed", async () => {
    for (const args of [
      ['get', 'rset', '-n', other.name],
      ['get', 'rset', 'web', '-n', other.name],
      ['describe', 'rset/web', '-n', other.name],
      ['wait', 'rset/web', '-n', other.name],
      ['approve', 'rset/web', '-n', other.name],
      ['pause', 'rset/web', '-n', other.name],
      ['rollback', 'rset/web', '-n', other.name],
    ]) {
      const run = await cli(...args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(run.stderr, args.join(' ')).toMatch(
        new RegExp(
          `^convoy: forbidden \\(HTTP 403\\): releasesets\\.convoy\\.dev (("web" )?is forbidden): User "system:serviceaccount:${mine.name}:rset-tenant" cannot (get|list|patch) resource "releasesets"`,
        ),
      );
    }
    const untouched = await readSet(other.name);
    expect(untouched.metadata.annotations ?? {}).toEqual({});
    expect(untouched.spec.rollout.paused).toBe(false);
  });

  it("the HTTP API: the tenant reads, approves, pauses, resumes and rolls back its set; another namespace is 403 Forbidden, never the relay's view", async () => {
    await writeSetStatus(admin, mine.name, 'web', waitingStatus);
    const list = await http('GET', `/v1/namespaces/${mine.name}/releasesets`);
    expect(list.status).toBe(200);
    expect(list.body.items).toMatchObject([
      {
        namespace: mine.name,
        name: 'web',
        state: 'WaitingForApproval',
        step: 'eu',
        revision: REVISION_B.id,
        verdict: { kind: 'held', word: 'WaitingForApproval' },
      },
    ]);
    const one = await http('GET', `/v1/namespaces/${mine.name}/releasesets/web`);
    expect(one.status).toBe(200);
    expect(one.body.verdict).toMatchObject({ kind: 'held', word: 'WaitingForApproval' });
    expect((one.body.children as { name: string }[]).map((c) => c.name)).toEqual([
      'web-canary-1',
      'web-eu-1',
      'web-eu-2',
    ]);
    expect(
      (one.body.releaseSet as { metadata: Record<string, unknown> }).metadata.managedFields,
    ).toBeUndefined();
    const events = await http('GET', `/v1/namespaces/${mine.name}/releasesets/web/events`);
    expect((events.body.events as { reason: string }[]).map((e) => e.reason)).toEqual(['StepStarted']);
    const across = await http('GET', '/v1/releasesets');
    expect(across.body).toMatchObject({ scope: 'namespaces', namespaces: [mine.name] });
    expect((across.body.items as { namespace: string }[]).map((s) => s.namespace)).toEqual([mine.name]);

    await convoy.patchMerge('ReleaseSet', mine.name, 'web', {
      metadata: { annotations: { 'convoy.dev/approve': null } },
    });
    const wrongStep = await http('POST', `/v1/namespaces/${mine.name}/releasesets/web/approve`, {
      step: 'canary',
    });
    expect(wrongStep).toMatchObject({ status: 409, body: { error: 'NothingToApprove', field: 'step' } });
    const approve = await http('POST', `/v1/namespaces/${mine.name}/releasesets/web/approve`, {});
    expect(approve).toEqual({
      status: 200,
      body: { annotation: 'convoy.dev/approve', value: `eu@${REVISION_B.id}` },
    });
    expect((await readSet(mine.name)).metadata.annotations?.['convoy.dev/approve']).toBe(
      `eu@${REVISION_B.id}`,
    );
    expect(await http('POST', `/v1/namespaces/${mine.name}/releasesets/web/pause`)).toEqual({
      status: 200,
      body: { paused: true },
    });
    expect((await readSet(mine.name)).spec.rollout.paused).toBe(true);
    expect(await http('POST', `/v1/namespaces/${mine.name}/releasesets/web/resume`)).toEqual({
      status: 200,
      body: { paused: false },
    });
    expect((await readSet(mine.name)).spec.rollout.paused).toBe(false);
    const rollback = await http('POST', `/v1/namespaces/${mine.name}/releasesets/web/rollback`);
    expect(rollback).toEqual({
      status: 200,
      body: { annotation: 'convoy.dev/rollback', value: REVISION_B.id, to: REVISION_A.id },
    });

    for (const [method, path] of [
      ['GET', `/v1/namespaces/${other.name}/releasesets`],
      ['GET', `/v1/namespaces/${other.name}/releasesets/web`],
      ['GET', `/v1/namespaces/${other.name}/releasesets/web/events`],
      ['POST', `/v1/namespaces/${other.name}/releasesets/web/approve`],
      ['POST', `/v1/namespaces/${other.name}/releasesets/web/pause`],
      ['POST', `/v1/namespaces/${other.name}/releasesets/web/rollback`],
    ] as const) {
      const res = await http(method, path);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toBe('Forbidden');
      expect(res.body.message).toMatch(
        new RegExp(
          `^user "system:serviceaccount:${mine.name}:rset-tenant" may not (get|list|update) releasesets\\.convoy\\.dev`,
        ),
      );
      expect(JSON.stringify(res.body)).not.toContain(REVISION_B.id);
    }
    const untouched = await readSet(other.name);
    expect(untouched.metadata.annotations ?? {}).toEqual({});
    expect(untouched.spec.rollout.paused).toBe(false);
  });
});
