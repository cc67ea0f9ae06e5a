// `convoy dev`'s installation settings: locked down unless told otherwise; flags win over the
// CONVOY_* variables, which win over the defaults.
import { describe, expect, it } from 'vitest';
import { devSettings } from '../../../dev/dev-settings.ts';
import { identityManifests } from '../../../dev/shipped-identities.ts';

const EXAMPLES = 'convoy-examples';

describe('convoy dev settings', () => {
  it('default: Releases without a ServiceAccount act as default, only the examples namespace is a tenant, no cross-namespace references, no Secret watch', () => {
    expect(devSettings({}, {}, EXAMPLES)).toEqual({
      tenancy: { tenantNamespaces: [EXAMPLES], defaultServiceAccount: 'default', crossNamespaceRefs: false },
      watchSecrets: false,
    });
  });

  it('CONVOY_DEFAULT_SERVICE_ACCOUNT, CONVOY_IN_CLUSTER_NAMESPACES and CONVOY_CROSS_NAMESPACE_REFS are read; flags win over them', () => {
    const env = {
      CONVOY_DEFAULT_SERVICE_ACCOUNT: 'deployer',
      CONVOY_IN_CLUSTER_NAMESPACES: 'team-a',
      CONVOY_CROSS_NAMESPACE_REFS: 'true',
    };
    expect(devSettings({}, env, EXAMPLES).tenancy).toMatchObject({
      defaultServiceAccount: 'deployer',
      inClusterNamespaces: 'team-a',
      crossNamespaceRefs: true,
    });
    expect(
      devSettings({ 'default-service-account': 'ci', 'in-cluster-namespaces': 'team-b' }, env, EXAMPLES)
        .tenancy,
    ).toMatchObject({ defaultServiceAccount: 'ci', inClusterNamespaces: 'team-b' });
    expect(() => devSettings({}, { CONVOY_CROSS_NAMESPACE_REFS: 'yes' }, EXAMPLES)).toThrow(
      /CONVOY_CROSS_NAMESPACE_REFS: must be true or false/,
    );
  });

  it('--tenant-namespaces adds tenants after the examples namespace; --open-tenancy opens inCluster and cross-namespace references; --watch-secrets', () => {
    const open = devSettings(
      { 'tenant-namespaces': 'team-a, team-b,convoy-examples', 'open-tenancy': true, 'watch-secrets': true },
      {},
      EXAMPLES,
    );
    expect(open).toEqual({
      tenancy: {
        tenantNamespaces: [EXAMPLES, 'team-a', 'team-b'],
        defaultServiceAccount: 'default',
        inClusterNamespaces: '*',
        crossNamespaceRefs: true,
      },
      watchSecrets: true,
    });
  });

  it("the identities dev installs are the install manifests' (ServiceAccounts, RBAC, settings ConfigMap, the functions' admission policy), cluster-scoped names suffixed when asked", () => {
    const manifests = identityManifests({
      namespace: 'convoy-system',
      tenancy: { tenantNamespaces: [EXAMPLES] },
      watchSecrets: false,
      functionsToken: 't',
      clusterScopedSuffix: '-x',
    });
    expect(manifests.map((m) => `${m.kind}/${String(m.metadata['name'])}`).sort()).toEqual(
      [
        'ServiceAccount/convoy-relay',
        'ClusterRole/convoy-relay-x',
        'ClusterRoleBinding/convoy-relay-x',
        'Role/convoy-relay',
        'RoleBinding/convoy-relay',
        'ClusterRole/convoy-functions-x',
        'ClusterRoleBinding/convoy-functions-x',
        'ClusterRole/convoy-functions-impersonate-x',
        'RoleBinding/convoy-functions-impersonate-x',
        'Role/convoy-functions',
        'RoleBinding/convoy-functions',
        'ConfigMap/convoy-relay-config',
        'ValidatingAdmissionPolicy/convoy-functions-release-writes-x',
        'ValidatingAdmissionPolicyBinding/convoy-functions-release-writes-x',
      ].sort(),
    );
    const tenantBinding = manifests.find(
      (m) => m.kind === 'RoleBinding' && m.metadata['namespace'] === EXAMPLES,
    );
    expect(tenantBinding?.['roleRef']).toMatchObject({
      kind: 'ClusterRole',
      name: 'convoy-functions-impersonate-x',
    });
    // No ServiceAccount subject for the functions when a user of their group is given.
    const functionsSubjects = manifests
      .filter((m) => String(m.metadata['name']).startsWith('convoy-functions') && 'subjects' in m)
      .flatMap((m) => m['subjects'] as { kind: string }[]);
    expect(functionsSubjects.map((s) => s.kind)).toEqual(['Group', 'Group', 'Group']);
  });
});
