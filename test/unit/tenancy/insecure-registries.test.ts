// CONVOY_INSECURE_REGISTRIES: which OCI registries a Release may reach over plain HTTP (insecure: true).
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_TENANCY,
  insecureRegistryAllowed,
  TenancySettingsError,
} from '../../../domain/tenancy/settings.ts';
import { tenancyFromEnv } from '../../../platform/tenancy-config.ts';
import { tenancyEnvironment } from '../../../infra/installation-settings.ts';
import { devSettings } from '../../../dev/dev-settings.ts';

const asEnv = (entries: { name: string; value: string }[]) =>
  Object.fromEntries(entries.map((e) => [e.name, e.value]));

describe('CONVOY_INSECURE_REGISTRIES', () => {
  it('unset or empty: no registry over plain HTTP (the default)', () => {
    expect(insecureRegistryAllowed(DEFAULT_TENANCY, '127.0.0.1:5000')).toBe(false);
    expect(insecureRegistryAllowed(tenancyFromEnv({}), '127.0.0.1:5000')).toBe(false);
    expect(
      insecureRegistryAllowed(tenancyFromEnv({ CONVOY_INSECURE_REGISTRIES: '' }), '127.0.0.1:5000'),
    ).toBe(false);
  });

  it('a list of host[:port]: exactly those (case-insensitive); * any', () => {
    const listed = tenancyFromEnv({ CONVOY_INSECURE_REGISTRIES: 'registry.local:5000, Kind-Registry' });
    expect(insecureRegistryAllowed(listed, 'registry.local:5000')).toBe(true);
    expect(insecureRegistryAllowed(listed, 'kind-registry')).toBe(true);
    expect(insecureRegistryAllowed(listed, 'registry.local')).toBe(false);
    expect(insecureRegistryAllowed(listed, 'ghcr.io')).toBe(false);
    expect(insecureRegistryAllowed(tenancyFromEnv({ CONVOY_INSECURE_REGISTRIES: '*' }), 'ghcr.io')).toBe(
      true,
    );
  });

  it('a malformed entry fails the start, naming the variable', () => {
    expect(() => tenancyFromEnv({ CONVOY_INSECURE_REGISTRIES: 'http://registry.local' })).toThrow(
      TenancySettingsError,
    );
    expect(() => tenancyFromEnv({ CONVOY_INSECURE_REGISTRIES: 'http://registry.local' })).toThrow(
      'CONVOY_INSECURE_REGISTRIES: "http://registry.local" is not a registry host[:port] (use * for any, or a comma-separated list)',
    );
  });

  it('the installation settings generator always writes it (shipped installs: "", none; so the chart lists it), and the functions read it back; convoy dev passes the variable on', () => {
    const shipped = asEnv(tenancyEnvironment({}, 'convoy-system'));
    expect(shipped['CONVOY_INSECURE_REGISTRIES']).toBe('');
    expect(insecureRegistryAllowed(tenancyFromEnv(shipped), 'registry.local:5000')).toBe(false);
    const env = asEnv(tenancyEnvironment({ insecureRegistries: 'registry.local:5000' }, 'convoy-system'));
    expect(env['CONVOY_INSECURE_REGISTRIES']).toBe('registry.local:5000');
    expect(insecureRegistryAllowed(tenancyFromEnv(env), 'registry.local:5000')).toBe(true);
    expect(
      devSettings({}, { CONVOY_INSECURE_REGISTRIES: '127.0.0.1:5001' }, 'examples').tenancy
        .insecureRegistries,
    ).toBe('127.0.0.1:5001');
    expect(devSettings({}, {}, 'examples').tenancy).not.toHaveProperty('insecureRegistries');
  });
});
