// `convoy install --print` sets the installation's tenancy and Secret-watch settings: the same
// objects the generator makes for deploy/, the chart and the construct.
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { installCommand } from '../../../cli/install.ts';

function run(argv: string[]) {
  let out = '';
  const err: string[] = [];
  const code = installCommand(
    argv,
    { out: (t) => (out += t), err: (l) => err.push(l) },
    { CONVOY_RELAY_IMAGE: 'reg.example/convoy-relay:1' },
  );
  const docs = parseAllDocuments(out).map(
    (d) =>
      d.toJS() as {
        kind: string;
        metadata: { name: string; namespace?: string };
        data?: Record<string, string>;
        rules?: { resources: string[] }[];
      },
  );
  return { code, docs, err };
}

describe('convoy install --print: tenancy and watchSecrets', () => {
  it('--tenant-namespaces: a RoleBinding granting impersonation in each; the settings in the ConfigMap', () => {
    const r = run([
      '--print',
      '--no-crds',
      '--tenant-namespaces',
      'team-a,team-b',
      '--default-service-account',
      'deployer',
      '--cross-namespace-refs',
    ]);
    expect(r.code).toBe(0);
    const bindings = r.docs.filter(
      (d) => d.kind === 'RoleBinding' && d.metadata.name === 'convoy-functions-impersonate',
    );
    expect(bindings.map((b) => b.metadata.namespace)).toEqual(['team-a', 'team-b']);
    expect(r.docs.find((d) => d.kind === 'ConfigMap')?.data).toMatchObject({
      CONVOY_TENANT_NAMESPACES: 'team-a,team-b',
      CONVOY_IN_CLUSTER_NAMESPACES: 'team-a,team-b',
      CONVOY_DEFAULT_SERVICE_ACCOUNT: 'deployer',
      CONVOY_CROSS_NAMESPACE_REFS: 'true',
      CONVOY_WATCH_SECRETS: 'false',
    });
  });

  it('--watch-secrets grants the relay list/watch on Secrets and tells it so; without it, no Secret rule', () => {
    const relayRules = (docs: ReturnType<typeof run>['docs']) =>
      docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'convoy-relay')?.rules ?? [];
    expect(
      relayRules(run(['--print', '--no-crds']).docs).some((rule) => rule.resources.includes('secrets')),
    ).toBe(false);
    const on = run(['--print', '--no-crds', '--watch-secrets']);
    expect(relayRules(on.docs).some((rule) => rule.resources.includes('secrets'))).toBe(true);
    expect(on.docs.find((d) => d.kind === 'ConfigMap')?.data).toMatchObject({ CONVOY_WATCH_SECRETS: 'true' });
  });

  it.each(['kube-system', 'convoy-system'])(
    '--tenant-namespaces %s is refused in one line, exit 2, nothing printed',
    (ns) => {
      const r = run(['--print', '--tenant-namespaces', `team-a,${ns}`]);
      expect(r.code).toBe(2);
      expect(r.docs).toEqual([]);
      expect(r.err).toHaveLength(1);
      expect(r.err[0]).toMatch(
        new RegExp(
          `^convoy install: tenantNamespaces: ${ns} (may not be a tenant namespace|is convoy's own installation namespace)`,
        ),
      );
    },
  );
});
