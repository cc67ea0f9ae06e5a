// The installation's tenancy policy and settings, and who a Release acts as.
import { describe, expect, it } from 'vitest';
import type { Release } from '../../../domain/api/objects.ts';
import {
  assertInClusterAllowed,
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
  ({ metadata: { name: 'web', namespace }, spec: { ...(serviceAccountName ? { serviceAccountName } : {}) } }) as unknown as Release;

describe('who a Release acts as', () => {
  it('its serviceAccountName in its own namespace, impersonated', () => {
    const id = inClusterIdentity(release('team-a', 'deployer'), { defaultServiceAccount: 'default' });
    expect(impersonatedUser(id)).toBe('system:serviceaccount:team-a:deployer');
    expect(describeIdentity(id)).toBe('as system:serviceaccount:team-a:deployer');
  });
  it('the installation default when the field is empty', () => {
    expect(impersonatedUser(inClusterIdentity(release('team-a'), { defaultServiceAccount: 'default' }))).toBe('system:serviceaccount:team-a:default');
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
    expect(() => assertInClusterAllowed('team-a', 'team-a/local', { inClusterNamespaces: 'all' })).not.toThrow();
    expect(() => assertInClusterAllowed('platform', 'platform/local', { inClusterNamespaces: new Set(['platform']) })).not.toThrow();
    expect(() => assertInClusterAllowed('team-a', 'team-a/local', { inClusterNamespaces: new Set(['platform']) })).toThrow(/inClusterNamespaces: platform/);
    expect(() => assertInClusterAllowed('team-a', 'team-a/local', { inClusterNamespaces: new Set() })).toThrow(/inClusterNamespaces: none/);
  });
});

describe('settings from the environment', () => {
  it('unset keeps the defaults', () => {
    expect(parseTenancySettings({})).toEqual(DEFAULT_TENANCY);
  });
  it('parses each form', () => {
    const s = parseTenancySettings({ defaultServiceAccount: 'default', inClusterNamespaces: 'convoy-system, platform', crossNamespaceRefs: 'true' });
    expect(s.defaultServiceAccount).toBe('default');
    expect(s.inClusterNamespaces).toEqual(new Set(['convoy-system', 'platform']));
    expect(s.crossNamespaceRefs).toBe(true);
    expect(parseTenancySettings({ inClusterNamespaces: '*' }).inClusterNamespaces).toBe('all');
    expect(parseTenancySettings({ inClusterNamespaces: '' }).inClusterNamespaces).toEqual(new Set());
    expect(parseTenancySettings({ defaultServiceAccount: '' }).defaultServiceAccount).toBeUndefined();
  });
  it('bad values are refused, naming the variable', () => {
    const names = { defaultServiceAccount: 'CONVOY_DEFAULT_SERVICE_ACCOUNT', inClusterNamespaces: 'CONVOY_IN_CLUSTER_NAMESPACES', crossNamespaceRefs: 'CONVOY_CROSS_NAMESPACE_REFS' };
    expect(() => parseTenancySettings({ defaultServiceAccount: 'Not_A_Name' }, names)).toThrow(/CONVOY_DEFAULT_SERVICE_ACCOUNT/);
    expect(() => parseTenancySettings({ inClusterNamespaces: 'ok,BAD' }, names)).toThrow(TenancySettingsError);
    expect(() => parseTenancySettings({ crossNamespaceRefs: 'yes' }, names)).toThrow(/CONVOY_CROSS_NAMESPACE_REFS/);
  });
});
