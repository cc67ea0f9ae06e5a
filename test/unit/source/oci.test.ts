// The pure parts of OCI chart sources (domain/source/oci.ts): references, the tag a version request
// picks, WWW-Authenticate challenges, the Link header of a paged tag list, docker config JSON.
import { describe, expect, it } from 'vitest';
import {
  dockerConfigCredentials,
  nextLink,
  OCI_URL_PATTERN,
  parseOciChartReference,
  parseWwwAuthenticate,
  pickOciTag,
} from '../../../domain/source/oci.ts';

const F = 'spec.source.helm';

describe('oci:// references', () => {
  it('registry, port and path: the chart is appended as the last repository component', () => {
    expect(parseOciChartReference('oci://ghcr.io/stefanprodan/charts', 'podinfo', F)).toEqual({
      registry: 'ghcr.io',
      repository: 'stefanprodan/charts/podinfo',
    });
    expect(parseOciChartReference('oci://127.0.0.1:5000/charts/', 'demo', F)).toEqual({
      registry: '127.0.0.1:5000',
      repository: 'charts/demo',
    });
    expect(parseOciChartReference('oci://123456789012.dkr.ecr.eu-west-1.amazonaws.com', 'app', F)).toEqual({
      registry: '123456789012.dkr.ecr.eu-west-1.amazonaws.com',
      repository: 'app',
    });
  });

  it.each([
    'oci://',
    'oci:///charts',
    'oci://user:pass@ghcr.io/charts',
    'oci://ghcr.io/Charts',
    'oci://ghcr.io/charts:1.0.0',
    'oci://ghcr.io/charts?x=1',
    'oci://ghcr.io//charts',
    'oci://-bad.io/charts',
    'oci://ghcr.io/charts@sha256:abc',
  ])('malformed %s is refused naming the field, and the CRD pattern refuses it too', (url) => {
    expect(() => parseOciChartReference(url, 'demo', F)).toThrow(
      /spec\.source\.helm\.repository .* is not an oci:\/\/ repository location/,
    );
    expect(new RegExp(OCI_URL_PATTERN).test(url)).toBe(false);
  });

  it('a chart name that is not a repository component is refused', () => {
    expect(() => parseOciChartReference('oci://ghcr.io/charts', 'My_Chart', F)).toThrow(
      /spec\.source\.helm\.chart/,
    );
  });
});

describe('which tag a version request picks', () => {
  const tags = ['1.2.0', '1.2.3', '1.3.0', 'latest', 'main', '2.0.0-rc.1'];

  it('exact version', () => {
    expect(pickOciTag(tags, '1.2.0', 'chart demo', F)).toEqual({ ok: true, tag: '1.2.0', version: '1.2.0' });
  });

  it('range ~1.2 over 1.2.0/1.2.3/1.3.0 → 1.2.3', () => {
    expect(pickOciTag(tags, '~1.2', 'chart demo', F)).toEqual({ ok: true, tag: '1.2.3', version: '1.2.3' });
  });

  it('no version → the highest stable semver tag (pre-releases only when the range names one)', () => {
    expect(pickOciTag(tags, '', 'chart demo', F)).toEqual({ ok: true, tag: '1.3.0', version: '1.3.0' });
    expect(pickOciTag(tags, '>=2.0.0-rc.0', 'chart demo', F)).toEqual({
      ok: true,
      tag: '2.0.0-rc.1',
      version: '2.0.0-rc.1',
    });
  });

  it('a build-metadata version is stored by helm with _ in the tag', () => {
    expect(pickOciTag(['1.0.0_build.1'], '1.0.0+build.1', 'chart demo', F)).toEqual({
      ok: true,
      tag: '1.0.0_build.1',
      version: '1.0.0+build.1',
    });
  });

  it('tags that are not semver are ignored, and the message says so when nothing matches', () => {
    const pick = pickOciTag(['latest', 'main', '0.9.0'], '^1', 'chart demo in 127.0.0.1:5000/charts/demo', F);
    expect(pick.ok).toBe(false);
    expect(!pick.ok && pick.message).toBe(
      'chart demo in 127.0.0.1:5000/charts/demo has no tag matching "^1" (newest semver tags: 0.9.0; 2 tags that are not semver ignored); push one or change spec.source.helm.version',
    );
  });

  it('a version that is neither a version nor a range', () => {
    const pick = pickOciTag(tags, 'latest-ish!', 'chart demo', F);
    expect(!pick.ok && pick.message).toMatch(
      /spec\.source\.helm\.version "latest-ish!" is neither a version nor a semver range/,
    );
  });
});

describe('WWW-Authenticate', () => {
  it('the Bearer challenge of a token registry (Docker Hub, GHCR, Harbor)', () => {
    expect(
      parseWwwAuthenticate(
        'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull"',
      ),
    ).toEqual([
      {
        scheme: 'bearer',
        params: {
          realm: 'https://auth.docker.io/token',
          service: 'registry.docker.io',
          scope: 'repository:library/nginx:pull',
        },
      },
    ]);
  });

  it('Basic (htpasswd, ECR), several challenges, commas and escapes inside quotes, unquoted values', () => {
    expect(parseWwwAuthenticate('Basic realm="Registry Realm"')).toEqual([
      { scheme: 'basic', params: { realm: 'Registry Realm' } },
    ]);
    expect(
      parseWwwAuthenticate('Bearer realm="https://r/t",scope="repository:a/b:pull,push", Basic realm=x\\"y'),
    ).toEqual([
      { scheme: 'bearer', params: { realm: 'https://r/t', scope: 'repository:a/b:pull,push' } },
      { scheme: 'basic', params: { realm: 'x\\"y' } },
    ]);
    expect(parseWwwAuthenticate('Bearer realm="a\\"b"')).toEqual([
      { scheme: 'bearer', params: { realm: 'a"b' } },
    ]);
  });

  it('empty or junk gives no challenge with a realm', () => {
    expect(parseWwwAuthenticate('')).toEqual([]);
    expect(parseWwwAuthenticate('Bearer')).toEqual([{ scheme: 'bearer', params: {} }]);
  });
});

describe('Link header of a paged tag list', () => {
  it('the next page, resolved against the request', () => {
    expect(
      nextLink(
        '</v2/charts/demo/tags/list?last=1.2.0&n=2>; rel="next"',
        'http://127.0.0.1:5000/v2/charts/demo/tags/list?n=2',
      ),
    ).toBe('http://127.0.0.1:5000/v2/charts/demo/tags/list?last=1.2.0&n=2');
    expect(nextLink('<https://r.io/a>; rel="prev", <https://r.io/b>; rel=next', 'https://r.io/')).toBe(
      'https://r.io/b',
    );
  });

  it('no header or no next → undefined', () => {
    expect(nextLink(null, 'http://x/')).toBeUndefined();
    expect(nextLink('<https://r.io/a>; rel="prev"', 'https://r.io/')).toBeUndefined();
  });
});

describe('docker config JSON', () => {
  const auth = (u: string, p: string) => btoa(`${u}:${p}`);
  it('auth (base64 user:password) or username+password for the registry host; keys with scheme and path match', () => {
    const json = JSON.stringify({
      auths: {
        'https://index.docker.io/v1/': { auth: auth('hub', 'h-pass') },
        'ghcr.io': { username: 'gh', password: 'g:pass' },
        '127.0.0.1:5000': { auth: auth('local', 'p:with:colons') },
      },
    });
    expect(dockerConfigCredentials(json, 'docker.io', 'Secret ns/s')).toEqual({
      username: 'hub',
      password: 'h-pass',
    });
    expect(dockerConfigCredentials(json, 'ghcr.io', 'Secret ns/s')).toEqual({
      username: 'gh',
      password: 'g:pass',
    });
    expect(dockerConfigCredentials(json, '127.0.0.1:5000', 'Secret ns/s')).toEqual({
      username: 'local',
      password: 'p:with:colons',
    });
    expect(dockerConfigCredentials(json, 'quay.io', 'Secret ns/s')).toBeUndefined();
  });

  it('malformed: not JSON, no auths, an entry without credentials — named, with no value in the message', () => {
    expect(() => dockerConfigCredentials('{', 'r', 'Secret ns/s')).toThrow(
      'Secret ns/s: .dockerconfigjson is not JSON',
    );
    expect(() => dockerConfigCredentials('{}', 'r', 'Secret ns/s')).toThrow(/no "auths" object/);
    expect(() =>
      dockerConfigCredentials(JSON.stringify({ auths: { r: { email: 'secret@x' } } }), 'r', 'Secret ns/s'),
    ).toThrow('Secret ns/s: the "r" entry has neither "auth" nor "username" and "password"');
    expect(() =>
      dockerConfigCredentials(
        JSON.stringify({ auths: { r: { auth: btoa('nocolon') } } }),
        'r',
        'Secret ns/s',
      ),
    ).toThrow(/not base64 of user:password/);
  });
});
