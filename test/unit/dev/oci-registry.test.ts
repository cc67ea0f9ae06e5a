// convoy dev's OCI registry (dev/oci-registry.ts): where it looks for the binary, and how its host
// joins CONVOY_INSECURE_REGISTRIES.
import { describe, expect, it } from 'vitest';
import { registryBinaryPath, withInsecureRegistry } from '../../../dev/oci-registry.ts';

describe('convoy dev OCI registry settings', () => {
  it('the binary is where scripts/build-oci-registry.sh puts it (XDG_CACHE_HOME, CONVOY_REGISTRY_VERSION)', () => {
    expect(registryBinaryPath({ XDG_CACHE_HOME: '/c' })).toBe('/c/convoy/tools/registry-v3.1.2/registry');
    expect(registryBinaryPath({ XDG_CACHE_HOME: '/c', CONVOY_REGISTRY_VERSION: 'v3.0.0' })).toBe(
      '/c/convoy/tools/registry-v3.0.0/registry',
    );
  });

  it('the registry host is added to the insecure registries, once; * already allows it', () => {
    expect(withInsecureRegistry(undefined, '127.0.0.1:8482')).toBe('127.0.0.1:8482');
    expect(withInsecureRegistry('', '127.0.0.1:8482')).toBe('127.0.0.1:8482');
    expect(withInsecureRegistry('lab:5000, other:5001', '127.0.0.1:8482')).toBe(
      'lab:5000,other:5001,127.0.0.1:8482',
    );
    expect(withInsecureRegistry('127.0.0.1:8482', '127.0.0.1:8482')).toBe('127.0.0.1:8482');
    expect(withInsecureRegistry('*', '127.0.0.1:8482')).toBe('*');
  });
});
