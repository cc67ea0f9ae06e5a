// The installation's tenancy policy and settings, and who a Release acts as.
import { describe, expect, it } from 'vitest';
import type { Release } from '../../../domain/api/objects.ts';
import {
  assertEksRoleAllowed,
  assertInClusterAllowed,
  eksRoleAllowed,
  formatEksRoles,
  globMatches,
  parseEksRoles,
  ReadRefusedError,
  DEFAULT_TENANCY,
  describeIdentity,
  impersonatedUser,
  inClusterIdentity,
  parseTenancySettings,
  PolicyRefusedError,
  referencedNamespace,
  remoteIdentity,
  TenancySettingsError,
} from '../../../domain/tenancy/index.ts';

const release = (namespace: string, serviceAccountName?: string) =>
  ({
    metadata: { name: 'web', namespace },
    spec: { ...(serviceAccountName ? { serviceAccountName } : {}) },
  }) as unknown as Release;

describe('who a Release acts as', () => {
  it('its serviceAccountName in its own namespace, impersonated', () => {
    const id = inClusterIdentity(release('team-a', 'deployer'), { defaultServiceAccount: 'default' });
    expect(impersonatedUser(id)).toBe('system:serviceaccount:team-a:deployer');
    expect(describeIdentity(id)).toBe('as system:serviceaccount:team-a:deployer');
  });
  it('the installation default when the field is empty', () => {
    expect(impersonatedUser(inClusterIdentity(release('team-a'), { defaultServiceAccount: 'default' }))).toBe(
      'system:serviceaccount:team-a:default',
    );
  });
  it("convoy's own identity when neither is set (as before), said so in messages", () => {
    const id = inClusterIdentity(release('team-a'), { defaultServiceAccount: undefined });
    expect(impersonatedUser(id)).toBeUndefined();
    expect(describeIdentity(id)).toContain('no serviceAccountName');
  });
  it("a remote Cluster's own credentials, not impersonated", () => {
    const id = remoteIdentity('team-a', 'prod');
    expect(impersonatedUser(id)).toBeUndefined();
    expect(describeIdentity(id)).toBe('with the credentials of Cluster team-a/prod');
  });
});

describe('policy', () => {
  const ref = { field: 'spec.cluster', fromNamespace: 'team-a', kind: 'Cluster', name: 'prod' };
  it('a reference without namespace, or to its own, resolves to its own namespace', () => {
    expect(referencedNamespace({ ...ref, namespace: undefined }, DEFAULT_TENANCY)).toBe('team-a');
    expect(referencedNamespace({ ...ref, namespace: 'team-a' }, DEFAULT_TENANCY)).toBe('team-a');
  });
  it('crossNamespaceRefs: another namespace is refused unless allowed, naming the policy and the object', () => {
    const refuse = () => referencedNamespace({ ...ref, namespace: 'team-b' }, DEFAULT_TENANCY);
    expect(refuse).toThrow(PolicyRefusedError);
    expect(refuse).toThrow(/crossNamespaceRefs.*|Cluster team-b\/prod/);
    expect(referencedNamespace({ ...ref, namespace: 'team-b' }, { crossNamespaceRefs: true })).toBe('team-b');
  });
  it('inClusterNamespaces: all, a list, or none', () => {
    expect(() =>
      assertInClusterAllowed('team-a', 'team-a/local', { inClusterNamespaces: 'all' }),
    ).not.toThrow();
    expect(() =>
      assertInClusterAllowed('platform', 'platform/local', { inClusterNamespaces: new Set(['platform']) }),
    ).not.toThrow();
    expect(() =>
      assertInClusterAllowed('team-a', 'team-a/local', { inClusterNamespaces: new Set(['platform']) }),
    ).toThrow(/inClusterNamespaces: platform/);
    expect(() =>
      assertInClusterAllowed('team-a', 'team-a/local', { inClusterNamespaces: new Set() }),
    ).toThrow(/inClusterNamespaces: none/);
  });
});

describe('settings from the environment', () => {
  it('unset keeps the defaults', () => {
    expect(parseTenancySettings({})).toEqual(DEFAULT_TENANCY);
  });
  it('parses each form', () => {
    const s = parseTenancySettings({
      defaultServiceAccount: 'default',
      inClusterNamespaces: 'convoy-system, platform',
      crossNamespaceRefs: 'true',
    });
    expect(s.defaultServiceAccount).toBe('default');
    expect(s.inClusterNamespaces).toEqual(new Set(['convoy-system', 'platform']));
    expect(s.crossNamespaceRefs).toBe(true);
    expect(parseTenancySettings({ inClusterNamespaces: '*' }).inClusterNamespaces).toBe('all');
    expect(parseTenancySettings({ inClusterNamespaces: '' }).inClusterNamespaces).toEqual(new Set());
    expect(parseTenancySettings({ defaultServiceAccount: '' }).defaultServiceAccount).toBeUndefined();
  });
  it('bad values are refused, naming the variable', () => {
    const names = {
      defaultServiceAccount: 'CONVOY_DEFAULT_SERVICE_ACCOUNT',
      inClusterNamespaces: 'CONVOY_IN_CLUSTER_NAMESPACES',
      crossNamespaceRefs: 'CONVOY_CROSS_NAMESPACE_REFS',
    };
    expect(() => parseTenancySettings({ defaultServiceAccount: 'Not_A_Name' }, names)).toThrow(
      /CONVOY_DEFAULT_SERVICE_ACCOUNT/,
    );
    expect(() => parseTenancySettings({ inClusterNamespaces: 'ok,BAD' }, names)).toThrow(
      TenancySettingsError,
    );
    expect(() => parseTenancySettings({ crossNamespaceRefs: 'yes' }, names)).toThrow(
      /CONVOY_CROSS_NAMESPACE_REFS/,
    );
    expect(() =>
      parseTenancySettings(
        { eksRoles: 'team-a=arn:aws:iam::1:role/a;team-b' },
        { eksRoles: 'CONVOY_EKS_ROLES' },
      ),
    ).toThrow(/CONVOY_EKS_ROLES: "team-b" is not <namespace>=<role>/);
    expect(() =>
      parseTenancySettings({ eksRoles: 'team-a=role/a' }, { eksRoles: 'CONVOY_EKS_ROLES' }),
    ).toThrow(/CONVOY_EKS_ROLES: "role\/a" \(for team-a\) is not an IAM role ARN/);
    expect(() => parseTenancySettings({ eksRoles: 'Team_A=self' })).toThrow(TenancySettingsError);
    expect(() => parseTenancySettings({ eksRoles: 'team-a=' })).toThrow(/names no role/);
  });
});

describe('policy eksRoles: which IAM roles the EKS Clusters of a namespace may use', () => {
  const A_ROLE = 'arn:aws:iam::111122223333:role/team-a-deployer';
  const B_ROLE = 'arn:aws:iam::111122223333:role/team-b-deployer';
  const settings = parseTenancySettings({
    eksRoles: `team-a=arn:aws:iam::111122223333:role/team-a-*; platform=self,*\n*=arn:aws:iam::111122223333:role/shared-readonly`,
  });
  const check =
    (namespace: string, roleArn: string | undefined, releaseNamespace = namespace) =>
    () =>
      assertEksRoleAllowed(
        { clusterNamespace: namespace, cluster: 'prod', roleArn, releaseNamespace },
        settings,
      );

  it('parses entries separated by ; or new lines, and formats them back', () => {
    expect(settings.eksRoles).toEqual([
      { namespace: 'team-a', roles: ['arn:aws:iam::111122223333:role/team-a-*'] },
      { namespace: 'platform', roles: ['self', '*'] },
      { namespace: '*', roles: ['arn:aws:iam::111122223333:role/shared-readonly'] },
    ]);
    expect(parseEksRoles(formatEksRoles(settings.eksRoles))).toEqual(settings.eksRoles);
    expect(formatEksRoles({ 'team-a': [A_ROLE], platform: ['self'] })).toBe(`team-a=${A_ROLE};platform=self`);
  });
  it("unset or empty: no namespace may use any role, nor the functions' own", () => {
    expect(DEFAULT_TENANCY.eksRoles).toEqual([]);
    expect(parseTenancySettings({ eksRoles: '' }).eksRoles).toEqual([]);
    expect(() =>
      assertEksRoleAllowed(
        { clusterNamespace: 'team-a', cluster: 'prod', roleArn: A_ROLE, releaseNamespace: 'team-a' },
        DEFAULT_TENANCY,
      ),
    ).toThrow(/policy eksRoles: team-a may use none/);
  });
  it("team-a's own roles pass; team-b's role is refused, naming the Cluster, the role, the policy and what team-a may use", () => {
    expect(check('team-a', A_ROLE)).not.toThrow();
    expect(check('team-a', B_ROLE)).toThrow(PolicyRefusedError);
    expect(check('team-a', B_ROLE)).toThrow(
      `Cluster team-a/prod would reach its EKS cluster as role ${B_ROLE}, which namespace team-a may not use (policy eksRoles: team-a may use arn:aws:iam::111122223333:role/team-a-*, arn:aws:iam::111122223333:role/shared-readonly)`,
    );
    try {
      check('team-a', B_ROLE)();
    } catch (error) {
      expect((error as PolicyRefusedError).policy).toBe('eksRoles');
    }
  });
  it("no roleArn (the functions' own role): refused unless `self` is named for the namespace — no pattern includes it", () => {
    expect(check('team-a', undefined)).toThrow(
      /as convoy's own IAM role \(spec.eks has no roleArn\), which namespace team-a may not use/,
    );
    expect(check('platform', undefined)).not.toThrow();
    expect(eksRoleAllowed('team-b', undefined, parseEksRoles('*=*'))).toBe(false);
  });
  it('a pattern for every namespace applies to each; `*` roles allow any role ARN', () => {
    expect(check('team-b', 'arn:aws:iam::111122223333:role/shared-readonly')).not.toThrow();
    expect(check('platform', B_ROLE)).not.toThrow();
  });
  it("a Cluster in another namespace: both the Cluster's namespace and the Release's must be allowed the role", () => {
    expect(check('team-a', A_ROLE, 'team-b')).toThrow(/namespace team-b may not use/);
    expect(check('team-a', A_ROLE, 'team-a')).not.toThrow();
  });
  it('glob: * matches any run of characters, anything else itself; a tenant-controlled text cannot make it slow', () => {
    expect(globMatches('arn:*:role/team-a-*', 'arn:aws:iam::1:role/team-a-x')).toBe(true);
    expect(globMatches('arn:*:role/team-a-*', 'arn:aws:iam::1:role/team-b-x')).toBe(false);
    expect(globMatches('team-?', 'team-a')).toBe(false);
    expect(globMatches('*', '')).toBe(true);
    expect(globMatches('a*a*a*a*a*a*a*b', 'a'.repeat(2048))).toBe(false);
  });
});

describe('a read refused to the Release identity', () => {
  it('names the object, the identity and the missing right, and says how to grant it', () => {
    const id = inClusterIdentity(release('team-a', 'deployer'), { defaultServiceAccount: 'default' });
    const error = new ReadRefusedError(id, { kind: 'Secret', namespace: 'team-a', name: 'a-db' }, 'rbac');
    expect(error.message).toBe(
      'Secret team-a/a-db cannot be read as system:serviceaccount:team-a:deployer: it may not get secrets in namespace team-a (Forbidden); ' +
        'grant system:serviceaccount:team-a:deployer get on this Secret (a Role with resourceNames: [a-db]), or name one it may read',
    );
    expect(
      new ReadRefusedError(id, { kind: 'ConfigMap', namespace: 'team-a', name: 'v' }, 'impersonation')
        .message,
    ).toMatch(/does not let convoy act as that identity \(impersonation Forbidden\)/);
    const own = inClusterIdentity(release('team-a'), { defaultServiceAccount: undefined });
    expect(
      new ReadRefusedError(own, { kind: 'Secret', namespace: 'team-a', name: 'a-db' }, 'rbac').message,
    ).toMatch(/as convoy's own identity .* set spec.serviceAccountName/);
  });
});
