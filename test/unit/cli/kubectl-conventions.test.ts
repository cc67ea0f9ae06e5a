// kubectl's conventions the CLI follows, without a cluster: which namespace a verb defaults to (the
// kubeconfig context's, with kubectl's merge rules), the kind words of `get`, and -o json|yaml's key order.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { namespaceOf, releaseKey } from '../../../cli/args.ts';
import { contextNamespace } from '../../../cli/context-namespace.ts';
import { releaseOperands } from '../../../cli/get.ts';
import { kubectlOrder } from '../../../cli/get-listing.ts';
import { setKey } from '../../../cli/release-set/target.ts';
import { msToLateInSecond, syncTaken } from '../../../cli/sync-wait.ts';
import type { Release } from '../../../domain/api/objects.ts';

const dir = mkdtempSync(join(tmpdir(), 'convoy-context-ns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kubeconfig = (name: string, body: Record<string, unknown>) => {
  const file = join(dir, name);
  writeFileSync(file, stringify({ apiVersion: 'v1', kind: 'Config', ...body }));
  return file;
};
const context = (name: string, namespace?: string) => ({
  name,
  context: { cluster: 'c', user: 'u', ...(namespace === undefined ? {} : { namespace }) },
});

describe("the default namespace: -n, else the kubeconfig context's, else default", () => {
  const one = kubeconfig('one.yaml', {
    'current-context': 'dev',
    contexts: [context('dev', 'team-a'), context('prod'), context('ops', 'ops')],
  });
  const env = { HOME: '/nonexistent' };

  it("the current context's namespace; --context chooses another; a context without one gives none", () => {
    expect(contextNamespace({ kubeconfig: one }, env)).toEqual({ namespace: 'team-a', context: 'dev' });
    expect(contextNamespace({ kubeconfig: one, context: 'ops' }, env)).toEqual({
      namespace: 'ops',
      context: 'ops',
    });
    expect(contextNamespace({ kubeconfig: one, context: 'prod' }, env)).toBeUndefined();
  });

  it("KUBECONFIG with several files: the first current-context and the first definition of that context win (kubectl's merge)", () => {
    const first = kubeconfig('first.yaml', { contexts: [context('dev', 'from-first')] });
    const second = kubeconfig('second.yaml', {
      'current-context': 'dev',
      contexts: [context('dev', 'from-second')],
    });
    expect(contextNamespace({}, { ...env, KUBECONFIG: `${first}:${second}` })).toEqual({
      namespace: 'from-first',
      context: 'dev',
    });
  });

  it('no kubeconfig, or one that cannot be read: none (the connection reports the kubeconfig)', () => {
    expect(contextNamespace({}, env)).toBeUndefined();
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'contexts: [\n');
    expect(contextNamespace({ kubeconfig: broken }, env)).toBeUndefined();
    expect(contextNamespace({ kubeconfig: join(dir, 'missing.yaml') }, env)).toBeUndefined();
  });

  it('a name without a namespace goes to -n, else the context namespace, else default; <ns>/<name> is never overridden by the context', () => {
    expect(namespaceOf({ defaultNamespace: 'team-a' }).effective).toBe('team-a');
    expect(namespaceOf({ namespace: 'x', defaultNamespace: 'team-a' }).effective).toBe('x');
    expect(namespaceOf({}).effective).toBe('default');
    expect(releaseKey('status', ['web'], { defaultNamespace: 'team-a' })).toEqual({
      namespace: 'team-a',
      name: 'web',
    });
    expect(releaseKey('status', ['other/web'], { defaultNamespace: 'team-a' })).toEqual({
      namespace: 'other',
      name: 'web',
    });
    expect(() => releaseKey('status', ['other/web'], { namespace: 'x', defaultNamespace: 'team-a' })).toThrow(
      'status: "other/web" names namespace other but -n says x',
    );
    expect(setKey('wait', ['rset/web'], { defaultNamespace: 'team-a' })).toEqual({
      namespace: 'team-a',
      name: 'web',
    });
  });
});

describe('get: the kind named first, as kubectl takes it', () => {
  it.each([
    [['releases'], []],
    [['release', 'web'], ['web']],
    [['rel'], []],
    [['rels', 'ns/web'], ['ns/web']],
    [['releases.convoy.dev/web'], ['web']],
    [['release.convoy.dev', 'web'], ['web']],
    [['web'], ['web']],
    [['team/web'], ['team/web']],
  ])('%j → %j', (operands, expected) => {
    expect(releaseOperands(operands)).toEqual(expected);
  });
});

describe("-o json|yaml: kubectl's key order", () => {
  it('apiVersion, kind, metadata, spec, status at the top and every level sorted; arrays keep their order', () => {
    const ordered = kubectlOrder({
      status: { conditions: [{ type: 'b', status: 'True' }, { type: 'a' }] },
      spec: { source: {}, cluster: { name: 'x' } },
      metadata: { namespace: 'n', name: 'x', annotations: {} },
      kind: 'Release',
      apiVersion: 'convoy.dev/v1alpha1',
    }) as Record<string, Record<string, unknown>>;
    expect(Object.keys(ordered)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(Object.keys(ordered['metadata'] ?? {})).toEqual(['annotations', 'name', 'namespace']);
    expect(JSON.stringify(ordered['status'])).toBe(
      '{"conditions":[{"status":"True","type":"b"},{"type":"a"}]}',
    );
  });
});

describe('sync --wait: which reconcile answers the request', () => {
  const request = { value: '2026-12-07T10:00:05Z', force: false };
  const release = (status: Record<string, unknown>) => ({ spec: {}, status }) as unknown as Release;

  it('an attempt after the request second, or the status echoing it, takes it; an attempt in the same second does not', () => {
    expect(syncTaken(release({ lastAttempted: { attemptedAt: '2026-12-07T10:00:06Z' } }), request)).toBe(
      true,
    );
    expect(syncTaken(release({ lastAttempted: { attemptedAt: '2026-12-07T10:00:05Z' } }), request)).toBe(
      false,
    );
    expect(syncTaken(release({ lastHandledSyncAt: request.value }), request)).toBe(true);
    expect(syncTaken(release({ lastHandledSyncAt: request.value }), { ...request, force: true })).toBe(false);
    expect(syncTaken(release({ lastHandledForceSyncAt: request.value }), { ...request, force: true })).toBe(
      true,
    );
    expect(syncTaken({ spec: {} } as unknown as Release, request)).toBe(false);
  });

  it('the request is written at .900 s of its second or later', () => {
    expect(msToLateInSecond(1_000)).toBe(900);
    expect(msToLateInSecond(1_899)).toBe(1);
    expect(msToLateInSecond(1_900)).toBe(0);
    expect(msToLateInSecond(1_999)).toBe(0);
  });
});
