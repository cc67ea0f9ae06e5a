/**
 * The fleet function in convoy's runtime ("the serverless shape"): the runtime started as
 * `convoy dev` starts it (dev/runtime.ts: fauxqs, the relay, a poller per queue, the functions'
 * shipped identity), a ReleaseSet over three Clusters of the embedded apiserver (one target
 * namespace each) whose template is a Git source. A fleet message on the fleet queue makes the
 * children, pinned to the branch's commit; the status is written by convoy-releaseset; once the
 * children are ready (the Release loops deliver them) the rollout ends Succeeded. A forged message
 * (another uid, or a set that does not exist) writes nothing: no child, no status, no Lease. A
 * Cluster's annotation that the template reads (`${cluster.annotations.region}`), changed, reaches
 * its child through the relay's Cluster trigger alone, at the same revision.
 */
import { CoreV1Api, EventsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseReleaseSet, type ReleaseSet } from '../../domain/api/release-set.ts';
import { FleetAnnotation, FleetLabel } from '../../domain/fleet/labels.ts';
import { FieldManager } from '../../domain/status/field-managers.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';

const CLUSTERS = ['east', 'west', 'north'] as const;
const configMap = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: {k: v}\n`;

interface ManagedField {
  manager?: string;
  subresource?: string;
}

describe('the fleet function in the runtime', () => {
  let kc: KubeConfig;
  let env: RuntimeEnv;
  const targets: FreshNamespace[] = [];
  /** Namespaces to delete besides the targets. */
  const others: FreshNamespace[] = [];
  let commit: string;
  let setUid: string;

  const getSet = async (
    name: string,
  ): Promise<ReleaseSet & { metadata: { managedFields?: ManagedField[] } }> => {
    const raw = await env.api.get('ReleaseSet', env.ns.name, name);
    const parsed = parseReleaseSet(raw);
    if (!parsed.ok) throw new Error(`ReleaseSet ${name} does not parse: ${parsed.error}`);
    return {
      ...parsed.value,
      metadata: {
        ...parsed.value.metadata,
        managedFields: (raw['metadata'] as { managedFields?: ManagedField[] }).managedFields,
      },
    };
  };
  const childrenOf = async (set: string) => {
    const list = (await env.api.raw.listNamespacedCustomObject({
      group: 'convoy.dev',
      version: 'v1alpha1',
      namespace: env.ns.name,
      plural: 'releases',
      labelSelector: `${FleetLabel.releaseSet}=${set}`,
    })) as {
      items: {
        metadata: { name: string; managedFields?: ManagedField[] };
        spec: { source: { git: { ref: Record<string, string> } }; targetNamespace: string };
      }[];
    };
    return list.items;
  };
  const sendFleet = (name: string, uid: string, cause: string) =>
    env.sendRaw('fleet', [env.messageBody(name, uid, cause, 'fleet')]);

  beforeAll(async () => {
    kc = kubeConfigFor(inject('kubeconfigPath'));
    env = await startRuntimeEnv(kc, 'fleet-rt', { relayTickMs: 200 });
    for (const cluster of CLUSTERS) {
      const target = await freshNamespace(kc, `fleet-rt-${cluster}`);
      targets.push(target);
      // Each Cluster is the embedded apiserver (inCluster), told apart by the namespace its children deliver to.
      await env.api.create(
        'Cluster',
        env.ns.name,
        cluster,
        { inCluster: true },
        { labels: { fleet: 'web', target: target.name }, annotations: { region: `${cluster}-1` } },
      );
    }
    ({ commit } = await env.repo('web', { 'app/cm.yaml': configMap('web-config') }));
    await env.api.create('ReleaseSet', env.ns.name, 'web', {
      clusters: { selector: { matchLabels: { fleet: 'web' } } },
      template: {
        metadata: { annotations: { 'example.com/region': '${cluster.annotations.region}' } },
        spec: {
          targetNamespace: '${cluster.labels.target}',
          source: { git: { url: `${env.git.url}/web.git`, ref: { branch: 'main' }, path: 'app' } },
        },
      },
    });
    setUid = (await getSet('web')).metadata.uid ?? '';
  }, 120_000);

  afterAll(async () => {
    await env?.close();
    for (const target of [...targets, ...others]) await target.delete();
  });

  it('a forged fleet message (another uid, or no such set) writes nothing', async () => {
    // The relay may send the set its own message meanwhile (it watches ReleaseSets): what the forged
    // messages did is read from their own log lines and the objects only they could have written.
    const forged = '00000000-0000-4000-8000-000000000000';
    const [[wrongUid], [noSet]] = await Promise.all([
      sendFleet('web', forged, 'test: forged uid'),
      sendFleet('ghost', forged, 'test: no such set'),
    ]);
    const linesOf = (messageId: string | undefined) => env.logs.filter((l) => l['messageId'] === messageId);
    const droppedLine = (messageId: string | undefined) =>
      linesOf(messageId).find((l) => l.msg === 'dropped');
    const first = await until('the forged-uid message is dropped', () => droppedLine(wrongUid));
    const second = await until('the no-such-set message is dropped', () => droppedLine(noSet));
    expect(first['reason']).toMatch(/has uid .* not the message's 00000000-/);
    expect(second['reason']).toMatch(/ghost does not exist/);
    // Dropped at admission: no Lease taken, no child written, no status, no Event.
    for (const id of [wrongUid, noSet]) expect(linesOf(id).map((l) => l.msg)).toEqual(['dropped']);
    expect(await env.lease(forged, 'fleet')).toBeUndefined();
    expect(await childrenOf('ghost')).toEqual([]);
  }, 60_000);

  it('a fleet message makes the children pinned to the commit, status by convoy-releaseset, and the rollout ends Succeeded', async () => {
    await sendFleet('web', setUid, 'test: ReleaseSet added');
    const children = await until(
      'three children exist',
      async () => {
        const items = await childrenOf('web');
        return items.length === CLUSTERS.length ? items : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(children.map((c) => c.metadata.name).sort()).toEqual(CLUSTERS.map((c) => `web-${c}`).sort());
    for (const child of children) {
      expect(child.spec.source.git.ref).toEqual({ commit });
      expect(targets.map((t) => t.name)).toContain(child.spec.targetNamespace);
      expect(
        child.metadata.managedFields?.some(
          (f) => f.manager === FieldManager.releaseSet && f.subresource === undefined,
        ),
      ).toBe(true);
    }

    const generated = await until('the status says Generated True', async () => {
      const set = await getSet('web');
      return set.status?.conditions?.find((c) => c.type === 'Generated' && c.status === 'True')
        ? set
        : undefined;
    });
    expect(generated.status?.revision?.source.git?.commit).toBe(commit);
    expect(
      generated.metadata.managedFields?.some(
        (f) => f.manager === FieldManager.releaseSet && f.subresource === 'status',
      ),
    ).toBe(true);

    // The children are delivered by the Release loops; the fleet looks again (requeueAfter) until the batch is ready.
    const succeeded = await until(
      'the rollout is Succeeded',
      async () => {
        const set = await getSet('web');
        return set.status?.rollout?.state === 'Succeeded' ? set : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    expect(succeeded.status?.conditions?.find((c) => c.type === 'RolloutSucceeded')).toMatchObject({
      status: 'True',
      reason: 'Succeeded',
    });
    expect(succeeded.status?.lastSucceededRevision?.id).toBe(succeeded.status?.revision?.id);
    const core = kc.makeApiClient(CoreV1Api);
    for (const target of targets)
      expect(
        (await core.readNamespacedConfigMap({ name: 'web-config', namespace: target.name })).data,
      ).toEqual({ k: 'v' });
    // The fleet's Lease is its own (convoy-fleet-<set uid>), in the installation namespace.
    expect((await env.lease(setUid, 'fleet'))?.metadata?.labels).toEqual({
      'convoy.dev/release-set-uid': setUid,
    });
  }, 180_000);

  it("writes Events about the ReleaseSet, keeps a user's annotation on a child, and deletes the child of a Cluster that stops matching", async () => {
    const events = await until('a Generated Event regards the ReleaseSet', async () => {
      const list = await kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: env.ns.name });
      const found = list.items.filter(
        (e) => e.regarding?.kind === 'ReleaseSet' && e.regarding.name === 'web',
      );
      return found.some((e) => e.reason === 'Generated') ? found : undefined;
    });
    expect(
      events.every((e) => e.reportingController === 'convoy.dev/fleet' && e.regarding?.uid === setUid),
    ).toBe(true);

    await env.api.patchMerge('Release', env.ns.name, 'web-east', {
      metadata: { annotations: { 'example.com/owner': 'alice' } },
    });
    await env.api.patchMerge('Cluster', env.ns.name, 'north', { metadata: { labels: { fleet: null } } });
    // A new template (a label for every child): a new revision, so the set applies web-east again.
    await env.api.patchMerge('ReleaseSet', env.ns.name, 'web', {
      spec: { template: { metadata: { labels: { tier: 'web' } } } },
    });
    await sendFleet('web', setUid, 'test: Cluster north relabelled, template changed');
    const east = await until(
      'web-east carries the new template label',
      async () => {
        const release = await env.getRelease('web-east');
        return release.metadata.labels?.['tier'] === 'web' ? release : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(east.metadata.annotations?.['example.com/owner']).toBe('alice');
    await until('the child of Cluster north is deleted', async () => (await childrenOf('web')).length === 2);
    expect((await childrenOf('web')).map((c) => c.metadata.name).sort()).toEqual(['web-east', 'web-west']);
    const set = await until('the status counts two Clusters', async () => {
      const current = await getSet('web');
      return current.status?.clusters?.selected === 2 ? current : undefined;
    });
    expect(set.status?.conditions?.find((c) => c.type === 'Generated')?.status).toBe('True');
  }, 90_000);

  it('a Cluster reannotated: the relay sends the set a message and the child follows the annotation its template reads, at the same revision', async () => {
    // Quiet first (the previous case's rollout done), so the relay's message is the Cluster's own.
    const settled = await until(
      'the rollout of the new template is Succeeded',
      async () => {
        const current = await getSet('web');
        return current.status?.rollout?.state === 'Succeeded' &&
          current.status.revision?.id === current.status.lastSucceededRevision?.id
          ? current
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const revision = settled.status?.revision?.id;
    expect((await env.getRelease('web-east')).metadata.annotations).toMatchObject({
      'example.com/region': 'east-1',
      [FleetAnnotation.revision]: revision,
    });
    // No message is sent by hand: the relay's Cluster trigger is the only one (the set's timer is 5 minutes away).
    await env.api.patchMerge('Cluster', env.ns.name, 'east', {
      metadata: { annotations: { region: 'east-2' } },
    });
    const east = await until(
      'web-east carries the new annotation value',
      async () => {
        const release = await env.getRelease('web-east');
        return release.metadata.annotations?.['example.com/region'] === 'east-2' ? release : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(east.metadata.annotations?.[FleetAnnotation.revision]).toBe(revision);
    // The run logs 'fleet decided' after its child writes, status and Events: wait for the line, do not read it at once.
    await until(
      'the run the Cluster trigger brought has logged',
      () =>
        env.logs.some(
          (l) =>
            l.msg === 'fleet decided' && String(l['cause']).startsWith('watch: Cluster east reannotated'),
        )
          ? true
          : undefined,
      { timeoutMs: 30_000 },
    );
    expect((await env.getRelease('web-west')).metadata.annotations?.['example.com/region']).toBe('west-1');
    expect((await getSet('web')).status?.revision?.id).toBe(revision);
  }, 180_000);
});
