// Which operands name a ReleaseSet (the Release verbs route on it) and the set a verb acts on.
import { describe, expect, it } from 'vitest';
import { setKey, setOperands } from '../../../cli/release-set/target.ts';

describe('ReleaseSet operands', () => {
  it('rset, rset/<name>, releaseset/<name>, releasesets.convoy.dev/<name>; a Release name is not one', () => {
    expect(setOperands(['rset'])).toEqual({ name: undefined, rest: [] });
    expect(setOperands(['rset', 'web'])).toEqual({ name: 'web', rest: [] });
    expect(setOperands(['rset/web'])).toEqual({ name: 'web', rest: [] });
    expect(setOperands(['releaseset/web', 'x'])).toEqual({ name: 'web', rest: ['x'] });
    expect(setOperands(['releasesets.convoy.dev/fleet/web'])).toEqual({ name: 'fleet/web', rest: [] });
    expect(setOperands(['web'])).toBeUndefined();
    expect(setOperands(['team-a/web'])).toBeUndefined();
    expect(setOperands([])).toBeUndefined();
  });

  it('setKey: -n or rset/<namespace>/<name>; mistakes are usage errors naming the form', () => {
    expect(setKey('wait', ['rset/web'], 'fleet')).toEqual({ namespace: 'fleet', name: 'web' });
    expect(setKey('wait', ['rset/fleet/web'], undefined)).toEqual({ namespace: 'fleet', name: 'web' });
    expect(setKey('wait', ['rset/web'], undefined)).toEqual({ namespace: 'default', name: 'web' });
    expect(() => setKey('approve', ['rset'], undefined)).toThrow(
      'approve: missing the ReleaseSet: convoy approve rset/<name> [-n <namespace>]',
    );
    expect(() => setKey('wait', ['rset/Web'], undefined)).toThrow('wait: "Web" is not a ReleaseSet name');
    expect(() => setKey('wait', ['rset/a/web'], 'b')).toThrow(
      'wait: "a/web" names namespace a but -n says b',
    );
    expect(() => setKey('wait', ['rset/web', 'extra'], undefined)).toThrow(
      'wait: unexpected argument "extra"',
    );
  });
});
