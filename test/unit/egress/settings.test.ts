// The egress allow list as an installation setting: written by the one generator when set, read
// back by the functions as the policy, refused at install/synth when malformed; convoy dev adds its
// own servers to it.
import { describe, expect, it } from 'vitest';
import { decideEgress, formatAllowEntry } from '../../../domain/egress/policy.ts';
import { parseIp } from '../../../domain/egress/ip.ts';
import {
  egressEnvironment,
  ManifestError,
  tenancyEnvironment,
} from '../../../infra/installation-settings.ts';
import { tenancyFromEnv } from '../../../platform/tenancy-config.ts';
import { TenancySettingsError } from '../../../domain/tenancy/settings.ts';
import { devSettings, withEgressAllow } from '../../../dev/dev-settings.ts';

describe('egress settings', () => {
  it('nothing set: no variable written, the functions apply the strict policy (no egress settings)', () => {
    const env = tenancyEnvironment({ tenantNamespaces: ['team-a'] }, 'convoy-system');
    expect(env.map((e) => e.name)).not.toContain('CONVOY_EGRESS_ALLOW');
    expect(env.map((e) => e.name)).not.toContain('CONVOY_CLUSTER_NETWORKS');
    expect(tenancyFromEnv(Object.fromEntries(env.map((e) => [e.name, e.value]))).egress).toBeUndefined();
  });

  it('set: written as given and read back by the functions as the policy', () => {
    const env = Object.fromEntries(
      tenancyEnvironment(
        {
          tenantNamespaces: ['team-a'],
          egressAllow: 'registry.internal:5000, 10.0.0.0/8',
          clusterNetworks: '10.96.0.0/12',
        },
        'convoy-system',
      ).map((e) => [e.name, e.value]),
    );
    expect(env['CONVOY_EGRESS_ALLOW']).toBe('registry.internal:5000, 10.0.0.0/8');
    const egress = tenancyFromEnv(env).egress!;
    expect(egress.allow.map(formatAllowEntry)).toEqual(['registry.internal:5000', '10.0.0.0/8']);
    expect(decideEgress(egress, { host: '10.96.0.1', port: 443, address: parseIp('10.96.0.1')! })).toEqual({
      allowed: false,
      rule: 'cluster-network',
    });
    expect(decideEgress(egress, { host: '10.1.0.1', port: 443, address: parseIp('10.1.0.1')! })).toEqual({
      allowed: true,
    });
  });

  it("a malformed entry fails the install (naming the setting) and the functions' start (naming the variable)", () => {
    expect(() => egressEnvironment({ egressAllow: 'http://registry.internal' })).toThrow(ManifestError);
    expect(() => egressEnvironment({ egressAllow: 'http://registry.internal' })).toThrow(
      /^egressAllow: "http:\/\/registry.internal" is none of CIDR/,
    );
    expect(() => egressEnvironment({ clusterNetworks: '10.96.0.0' })).toThrow(
      /^clusterNetworks: "10.96.0.0" is not a CIDR/,
    );
    expect(() => tenancyFromEnv({ CONVOY_EGRESS_ALLOW: '10.0.0.0/40' })).toThrow(TenancySettingsError);
    expect(() => tenancyFromEnv({ CONVOY_EGRESS_ALLOW: '10.0.0.0/40' })).toThrow(
      /^CONVOY_EGRESS_ALLOW: "10.0.0.0\/40" is not a CIDR/,
    );
  });

  it('convoy dev: CONVOY_EGRESS_ALLOW is passed on, and its own servers are added once', () => {
    const settings = devSettings(
      {},
      { CONVOY_EGRESS_ALLOW: 'registry.lab:5000', CONVOY_CLUSTER_NETWORKS: '10.96.0.0/12' },
      'convoy-examples',
    );
    expect(settings.tenancy).toMatchObject({
      egressAllow: 'registry.lab:5000',
      clusterNetworks: '10.96.0.0/12',
    });
    expect(withEgressAllow(settings.tenancy.egressAllow, ['127.0.0.1:9418', '127.0.0.1:5001'])).toBe(
      'registry.lab:5000,127.0.0.1:9418,127.0.0.1:5001',
    );
    expect(withEgressAllow('127.0.0.1:9418', ['127.0.0.1:9418'])).toBe('127.0.0.1:9418');
    expect(withEgressAllow(undefined, ['127.0.0.1:9418'])).toBe('127.0.0.1:9418');
  });
});
