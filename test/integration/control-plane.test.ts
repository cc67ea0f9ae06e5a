import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ApiException,
  ApiextensionsV1Api,
  AuthenticationV1Api,
  CoreV1Api,
  VersionApi,
} from '@kubernetes/client-node';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { installCrds, startControlPlane } from '../../dev/control-plane.ts';
import { freePorts } from '../../dev/control-plane/processes.ts';
import { freshNamespace, kubeConfigFor } from '../harness/kube.ts';

const kubeconfigPath = inject('kubeconfigPath');
const repoRoot = join(import.meta.dirname, '..', '..');

describe('test control plane', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it('a start whose kube-apiserver port was taken before it bound it starts again on new ports', async () => {
    // The race a busy machine plays: the port was free when picked, and someone else bound it first.
    // It accepts and never answers (the first start's readiness probe connects to it): closed by destroying them.
    const sockets: Socket[] = [];
    const taken = createServer((socket) => sockets.push(socket));
    await new Promise<void>((ok) => taken.listen(0, '127.0.0.1', () => ok()));
    const takenPort = (taken.address() as AddressInfo).port;
    const picked: number[][] = [];
    try {
      const cp = await startControlPlane({
        controllers: false,
        stopOnSignals: false,
        pickPorts: async () => {
          const [client = 0, peer = 0, secure = 0] = await freePorts(3);
          const ports = picked.length === 0 ? [client, peer, takenPort] : [client, peer, secure];
          picked.push(ports);
          return ports;
        },
      });
      cleanups.push(() => cp.stop());
      expect(picked).toHaveLength(2);
      // startControlPlane returned: the second start's kube-apiserver answered /readyz on its own port.
      expect(cp.server).toBe(`https://127.0.0.1:${picked[1]?.[2]}`);
      expect(picked[1]?.[2]).not.toBe(takenPort);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((ok) => taken.close(() => ok()));
    }
    // Safety net only: two starts (the first stops after kube-apiserver exits), each ~5-10 s, longer under load.
  }, 180_000);

  it('answers /version with v1.34.x using the admin kubeconfig', async () => {
    const version = await kubeConfigFor(kubeconfigPath).makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toMatch(/^v1\.34\.\d+$/);
    expect(version.major).toBe('1');
    expect(version.minor).toBe('34');
  });

  it('gives two namespaces created in parallel distinct names that both exist', async () => {
    const kc = kubeConfigFor(kubeconfigPath);
    const [a, b] = await Promise.all([freshNamespace(kc, 'parallel'), freshNamespace(kc, 'parallel')]);
    cleanups.push(a.delete, b.delete);
    expect(a.name).not.toBe(b.name);
    const core = kc.makeApiClient(CoreV1Api);
    const [na, nb] = await Promise.all([
      core.readNamespace({ name: a.name }),
      core.readNamespace({ name: b.name }),
    ]);
    expect([na.metadata?.name, nb.metadata?.name]).toEqual([a.name, b.name]);
  });

  it('authenticates the extra users by token, without privileges', async () => {
    const alice = kubeConfigFor(kubeconfigPath, 'alice');
    const review = await alice.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    expect(review.status?.userInfo?.username).toBe('alice');
    expect(review.status?.userInfo?.groups).toContain('system:authenticated');

    const forbidden = await alice
      .makeApiClient(CoreV1Api)
      .listNamespace()
      .catch((e: unknown) => e);
    expect(forbidden).toBeInstanceOf(ApiException);
    expect((forbidden as ApiException<unknown>).code).toBe(403);

    const stranger = kubeConfigFor(kubeconfigPath, 'alice');
    const user = stranger.getCurrentUser();
    if (!user) throw new Error('kubeconfig context alice has no user');
    stranger.users = stranger.users.map((u) =>
      u.name === user.name ? { ...u, token: 'not-a-valid-token' } : u,
    );
    const unauthorized = await stranger
      .makeApiClient(CoreV1Api)
      .listNamespace()
      .catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(ApiException);
    expect((unauthorized as ApiException<unknown>).code).toBe(401);
  });

  it('installCrds keeps enum, default and x-kubernetes-* schema fields and waits for Established', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'convoy-crds-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const group = `g${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}.convoy.test`;
    const name = `widgets.${group}`;
    await writeFile(
      join(dir, 'widgets.yaml'),
      `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${name}
spec:
  group: ${group}
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1alpha1
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: { type: string, enum: [small, large], default: small }
                extra: { type: object, x-kubernetes-preserve-unknown-fields: true }
            status: { type: object, x-kubernetes-preserve-unknown-fields: true }
---
`,
    );
    await installCrds(kubeconfigPath, dir);
    const ext = kubeConfigFor(kubeconfigPath).makeApiClient(ApiextensionsV1Api);
    cleanups.push(async () => {
      await ext.deleteCustomResourceDefinition({ name });
    });
    const crd = await ext.readCustomResourceDefinition({ name });
    expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
    const managers = (crd.metadata?.managedFields ?? []).map((f) => `${f.manager}/${f.operation}`);
    expect(managers).toContain('convoy-installer/Apply');
    const specProps = crd.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec?.properties;
    expect(specProps?.size?._enum).toEqual(['small', 'large']);
    expect(specProps?.size?._default).toBe('small');
    expect(specProps?.extra?.x_kubernetes_preserve_unknown_fields).toBe(true);

    await expect(installCrds(kubeconfigPath, join(dir, 'missing'))).resolves.toBeUndefined();
  });

  it('leaves no etcd, kube-apiserver or temp dir behind when its Node process is SIGKILLed', async () => {
    const child = spawn(process.execPath, [join(repoRoot, 'test/harness/start-and-wait.ts')], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return Promise.resolve();
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<void>((ok) => child.once('exit', () => ok()));

    // Started (its pids printed) or failed (it exits, and stderr says why): startControlPlane bounds
    // its own start (readyTimeoutMs, 120 s by default, for /readyz and again for the Nodes), so no
    // guess at how fast this machine starts a control plane is needed here — a fixed 45 s ran out
    // at load 28.
    const firstLine = await Promise.race([
      new Promise<string>((ok) => createInterface({ input: child.stdout }).once('line', ok)),
      exited.then(() => {
        throw new Error(`start-and-wait.ts exited before printing its pids; stderr:\n${stderr}`);
      }),
    ]);
    const started = JSON.parse(firstLine) as { etcd: number; apiserver: number; reaper: number; dir: string };
    expect(isAlive(started.etcd)).toBe(true);
    expect(isAlive(started.apiserver)).toBe(true);
    expect(existsSync(started.dir)).toBe(true);

    child.kill('SIGKILL');
    await exited;

    // The reaper notices its parent is gone, kills etcd and kube-apiserver, removes the dir, and
    // exits: its exit is the end of the cleanup, so the state is read once after it.
    while (isAlive(started.reaper)) await sleep(100);
    expect({
      etcd: isAlive(started.etcd),
      apiserver: isAlive(started.apiserver),
      dir: existsSync(started.dir),
    }).toEqual({
      etcd: false,
      apiserver: false,
      dir: false,
    });
    // Above the start's own bounds (startControlPlane: /readyz within 120 s, then the Nodes within 120 s).
  }, 360_000);
});

/** True while `pid` runs (a zombie awaiting its reaper counts as gone). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
