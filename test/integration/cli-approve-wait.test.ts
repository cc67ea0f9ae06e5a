/**
 * `convoy approve rset/<name> && convoy wait rset/<name>`, the script an operator writes, on the real
 * apiserver: the wait must answer for the rollout after the approval, not for the WaitingForApproval
 * the status still shows in the moment between the approval's write and the set taking it (which
 * used to end the wait at once with exit 4). The CLI runs as child processes from `sh -c`, with a
 * kubeconfig whose context names the namespace (no -n), as a user's would.
 *
 * The set's status is written as the fleet function writes it (server-side apply on /status, its
 * field manager; test/harness/release-set-fixture.ts) by a stand-in for that function which takes the
 * approval after a random delay (0.05–0.8 s, as the set's queue would), reports the step
 * Progressing, then Succeeded. What is tested is the CLI's wait, not the rollout.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP, API_VERSION } from '../../domain/api/common.ts';
import type { ReleaseSetStatus } from '../../domain/api/release-set.ts';
import { withContextNamespace } from '../harness/context-kubeconfig.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import {
  createWaitingSet,
  REVISION_B,
  succeededStatus,
  waitingStatus,
  writeSetStatus,
} from '../harness/release-set-fixture.ts';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'convoy.ts');
const RUNS = 20;

interface SetObject {
  metadata: { annotations?: Record<string, string> };
  status?: ReleaseSetStatus;
}

function progressing(generation: number): ReleaseSetStatus {
  const w = waitingStatus(generation);
  return { ...w, rollout: { state: 'Progressing', step: 1, stepName: 'eu' } };
}

/** `sh -c '<script>'` with `convoy` on PATH (binDir); resolves with its exit code and output. */
function script(
  line: string,
  kubeconfig: string,
  binDir: string,
): Promise<{ code: number | null; out: string }> {
  const child = spawn('sh', ['-c', line], {
    env: {
      PATH: `${binDir}:${process.env['PATH'] ?? ''}`,
      HOME: '/nonexistent-home',
      KUBECONFIG: kubeconfig,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('convoy approve … && convoy wait … in a script', { timeout: 600_000 }, () => {
  const adminPath = inject('kubeconfigPath');
  const admin = kubeConfigFor(adminPath);
  const objects = admin.makeApiClient(CustomObjectsApi);
  let ns: FreshNamespace;
  let dir: string;
  let kubeconfig: string;
  let binDir: string;
  const target = () => ({
    group: API_GROUP,
    version: API_VERSION,
    namespace: ns.name,
    plural: 'releasesets',
    name: 'web',
  });
  const readSet = async () => (await objects.getNamespacedCustomObject(target())) as SetObject;

  const removeApproval = async () => {
    if ((await readSet()).metadata.annotations?.['convoy.dev/approve'] === undefined) return;
    await objects.patchNamespacedCustomObject({
      ...target(),
      body: [{ op: 'remove', path: '/metadata/annotations/convoy.dev~1approve' }],
    });
  };

  beforeAll(async () => {
    ns = await freshNamespace(admin, 'approve-wait');
    await createWaitingSet(admin, ns.name);
    dir = await mkdtemp(join(tmpdir(), 'convoy-approve-wait-'));
    kubeconfig = await withContextNamespace(adminPath, ns.name, join(dir, 'kubeconfig.yaml'));
    // `convoy` on PATH, as an installed one would be: this checkout's bin under this Node.
    binDir = join(dir, 'bin');
    await mkdir(binDir);
    await writeFile(join(binDir, 'convoy'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, {
      mode: 0o755,
    });
  }, 60_000);
  afterAll(async () => {
    await ns?.delete();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The stand-in for the fleet function: takes the approval of step eu once written, after a delay. */
  function takeApprovals(stop: AbortSignal): Promise<number> {
    const approval = `eu@${REVISION_B.id}`;
    return (async () => {
      let taken = 0;
      while (!stop.aborted) {
        const set = await readSet();
        if (
          set.status?.rollout?.state === 'WaitingForApproval' &&
          set.metadata.annotations?.['convoy.dev/approve'] === approval
        ) {
          await new Promise((r) => setTimeout(r, 50 + Math.random() * 750));
          await writeSetStatus(admin, ns.name, 'web', progressing);
          await new Promise((r) => setTimeout(r, 200));
          await writeSetStatus(admin, ns.name, 'web', succeededStatus);
          taken += 1;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return taken;
    })();
  }

  it(`exits 0 with the verdict after the approval, first try, in ${RUNS} of ${RUNS} runs`, async () => {
    const stop = new AbortController();
    const controller = takeApprovals(stop.signal);
    const results: { code: number | null; out: string }[] = [];
    try {
      for (let i = 0; i < RUNS; i += 1) {
        // Back to waiting for approval of step eu, with no approval written.
        await removeApproval();
        await writeSetStatus(admin, ns.name, 'web', waitingStatus);
        results.push(
          await script(
            'convoy approve rset/web && convoy wait rset/web --timeout 60s --interval 200ms',
            kubeconfig,
            binDir,
          ),
        );
      }
    } finally {
      stop.abort();
    }
    expect(await controller).toBe(RUNS);
    for (const [i, r] of results.entries()) {
      expect(r.out, `run ${i + 1}`).toContain(
        `${ns.name}/web: step eu approved (convoy.dev/approve=eu@${REVISION_B.id})`,
      );
      expect(r.out, `run ${i + 1}`).toMatch(/^Succeeded: revision /m);
      expect(r.code, `run ${i + 1}: ${r.out}`).toBe(0);
    }
  });

  it('a set waiting for approval with none written still ends the wait at once with exit 4, naming the approve command', async () => {
    await removeApproval();
    await writeSetStatus(admin, ns.name, 'web', waitingStatus);
    const r = await script('convoy wait rset/web --timeout 60s', kubeconfig, binDir);
    expect(r.code).toBe(4);
    expect(r.out).toContain(`approve it with \`convoy approve rset/web -n ${ns.name} --step eu\``);
  });
});
