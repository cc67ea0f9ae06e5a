import { describe, expect, it } from 'vitest';
import { headersForHop, MAX_REDIRECTS, redirectStep, urlProblem } from '../../../domain/egress/redirect.ts';

const from = new URL('https://registry.example.com/v2/app/blobs/sha256:1');

describe('redirects convoy follows', () => {
  it('to the same scheme or HTTPS, relative or absolute; credentials only on the same origin', () => {
    const same = redirectStep(from, '/v2/app/blobs/other', [from.href], from.origin);
    expect(same).toMatchObject({ ok: true, sameOrigin: true });
    const cdn = redirectStep(from, 'https://cdn.example.net/blob?sig=1', [from.href], from.origin);
    expect(cdn).toMatchObject({ ok: true, sameOrigin: false });
    const plain = new URL('http://registry.local:5000/v2/');
    expect(redirectStep(plain, 'https://registry.local:5443/v2/', [plain.href], plain.origin)).toMatchObject({
      ok: true,
      sameOrigin: false,
    });
  });

  it('never HTTPS to plain HTTP, nor another scheme', () => {
    expect(redirectStep(from, 'http://registry.example.com/v2/', [from.href], from.origin)).toEqual({
      ok: false,
      reason:
        'redirected from HTTPS to plain HTTP; convoy follows redirects to the same scheme or HTTPS only',
    });
    expect(redirectStep(from, 'file:///etc/passwd', [from.href], from.origin)).toEqual({
      ok: false,
      reason: 'redirected to a file URL; only http(s) is followed',
    });
    expect(redirectStep(from, 'gopher://x/', [from.href], from.origin)).toMatchObject({ ok: false });
  });

  it('not a loop, and not more than MAX_REDIRECTS hops', () => {
    expect(redirectStep(from, from.href, [from.href], from.origin)).toEqual({
      ok: false,
      reason: 'redirect loop',
    });
    const visited = Array.from({ length: MAX_REDIRECTS + 1 }, (_, i) => `https://registry.example.com/${i}`);
    expect(redirectStep(from, '/next', visited, from.origin)).toEqual({
      ok: false,
      reason: `more than ${MAX_REDIRECTS} redirects`,
    });
    expect(redirectStep(from, '/next', visited.slice(0, MAX_REDIRECTS), from.origin)).toMatchObject({
      ok: true,
    });
  });

  it('not to a URL with user info or a host with a trailing dot', () => {
    const userinfo = redirectStep(from, 'https://user:pw@registry.example.com/', [from.href], from.origin);
    expect(userinfo.ok === false && userinfo.reason).toContain('user info');
    const dot = redirectStep(from, 'https://localhost./', [from.href], from.origin);
    expect(dot.ok === false && dot.reason).toContain('trailing dot');
    expect(urlProblem(new URL('oci://registry/x'))).toBe('scheme');
  });

  it('a hop to another origin carries no Authorization, Cookie or Proxy-Authorization', () => {
    const headers = {
      Authorization: 'Basic c2VjcmV0',
      accept: 'application/json',
      cookie: 'a=b',
      'Proxy-Authorization': 'x',
    };
    expect(headersForHop(headers, false)).toEqual({ accept: 'application/json' });
    expect(headersForHop(headers, true)).toEqual(headers);
  });
});
