import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../domain/render/kube-object.ts';
import {
  DEFAULT_DIFF_LIMITS,
  diffObjects,
  formatBytes,
  lineDiff,
  type DiffLimits,
} from '../../../domain/render/text-diff.ts';
import { byObjectKey, diffRenders } from '../../../relay/http/render-diff.ts';

const text = (lines: readonly string[]) => `${lines.join('\n')}\n`;
const numbered = (n: number, label = 'line') => Array.from({ length: n }, (_, i) => `${label} ${i}`);
const unlimited = { maxEditLines: 1_000_000, timeoutMs: 60_000 };

function configMap(name: string, data: Record<string, string>, namespace = 'app'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

/** The lines of one side: ' ' and that side's sign, without the prefix (a diff with all context). */
function side(lines: readonly string[], sign: '-' | '+'): string[] {
  return lines.filter((l) => l[0] === ' ' || l[0] === sign).map((l) => l.slice(2));
}

describe('lineDiff (jsdiff Myers) in the format of the relay diff and convoy diff', () => {
  it('is empty for equal texts', () => {
    expect(lineDiff(text(numbered(50)), text(numbered(50)), unlimited)).toEqual([]);
  });

  it('gives the lines of the hand-written diff it replaced: context of 3, "…" between hunks, none at either end', () => {
    const before = numbered(40);
    const after = [...before];
    after[5] = 'changed 5';
    after[30] = 'changed 30';
    after.splice(20, 1);
    expect(lineDiff(text(before), text(after), unlimited)).toEqual([
      '  line 2',
      '  line 3',
      '  line 4',
      '- line 5',
      '+ changed 5',
      '  line 6',
      '  line 7',
      '  line 8',
      '  …',
      '  line 17',
      '  line 18',
      '  line 19',
      '- line 20',
      '  line 21',
      '  line 22',
      '  line 23',
      '  …',
      '  line 27',
      '  line 28',
      '  line 29',
      '- line 30',
      '+ changed 30',
      '  line 31',
      '  line 32',
      '  line 33',
    ]);
  });

  it('reconstructs both sides when every line is context (added and removed objects included)', () => {
    const before = numbered(200).map((l, i) => (i % 7 === 0 ? `${l} old` : l));
    const after = numbered(220).map((l, i) => (i % 11 === 0 ? `${l} new` : l));
    const lines = lineDiff(text(before), text(after), { ...unlimited, context: 1_000 })!;
    expect(side(lines, '-')).toEqual(before);
    expect(side(lines, '+')).toEqual(after);
    expect(lineDiff('', text(['a', 'b']), unlimited)).toEqual(['+ a', '+ b']);
    expect(lineDiff(text(['a', 'b']), '', unlimited)).toEqual(['- a', '- b']);
  });

  it('gives up (undefined) when more lines changed than maxEditLines', () => {
    const before = numbered(100);
    const after = numbered(100, 'other');
    expect(lineDiff(text(before), text(after), { maxEditLines: 50, timeoutMs: 60_000 })).toBeUndefined();
    expect(lineDiff(text(before), text(after), { maxEditLines: 200, timeoutMs: 60_000 })).toHaveLength(200);
  });
});

describe('diffObjects: one diff per pair for convoy diff (live → dry run) and the relay, the caps over the whole call', () => {
  const clock = () => 0;

  it('answers in the order given: unchanged, created (no live side), changed, and over the cap of changed lines', () => {
    const limits: DiffLimits = { ...DEFAULT_DIFF_LIMITS, maxEditLines: 10 };
    const many = (v: string) => ({
      data: Object.fromEntries(numbered(20).map((_, i) => [`k${i}`, `${v}${i}`])),
    });
    const diffs = diffObjects(
      [
        { before: { data: { a: '1' }, kind: 'ConfigMap' }, after: { kind: 'ConfigMap', data: { a: '1' } } },
        { before: undefined, after: { data: { a: '1' } } },
        { before: { data: { a: '1' } }, after: { data: { a: '2' } } },
        { before: many('x'), after: many('y') },
      ],
      limits,
      clock,
    );
    expect(diffs).toEqual([
      { result: 'unchanged' },
      { result: 'diffed', lines: ['+ data:', '+   a: "1"'] },
      { result: 'diffed', lines: ['  data:', '-   a: "1"', '+   a: "2"'] },
      { result: 'skipped', skipped: 'diff skipped: object has over 10 changed lines (cap per object)' },
    ]);
  });

  it('the bytes diffed count over the whole call: a later pair past the budget is named with the cap per request', () => {
    // Each pair is 2 × 32 bytes of JSON: two fit in 150 bytes, the third does not.
    const limits: DiffLimits = { ...DEFAULT_DIFF_LIMITS, maxRequestBytes: 150 };
    const pair = (v: string) => ({ before: { value: `1${v}` }, after: { value: `2${v}` } });
    const diffs = diffObjects(
      [pair('x'.repeat(20)), pair('y'.repeat(20)), pair('z'.repeat(20))],
      limits,
      clock,
    );
    expect(diffs.map((d) => (d.result === 'skipped' ? d.skipped : d.result))).toEqual([
      'diffed',
      'diffed',
      'diff skipped: request over 150 B of objects diffed (cap per request)',
    ]);
  });
});

describe('diffRenders: the objects of two renders with caps per object and per request', () => {
  it('names added, removed and changed objects, counts unchanged ones, and hides Secret values', () => {
    const from = byObjectKey([
      configMap('web', { greeting: 'hello' }),
      configMap('gone', { a: '1' }),
      configMap('same', { b: '2' }),
    ]);
    const to = byObjectKey([
      configMap('web', { greeting: 'world' }),
      configMap('same', { b: '2' }),
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'creds', namespace: 'app' },
        stringData: { password: 's3cret' },
      },
    ]);
    const diff = diffRenders(from, to);
    expect(diff.unchanged).toBe(1);
    expect(diff.objects.map((o) => `${o.kind}/${o.name} ${o.change}`)).toEqual([
      'ConfigMap/gone removed',
      'ConfigMap/web changed',
      'Secret/creds added',
    ]);
    expect(diff.objects.find((o) => o.name === 'web')?.lines).toEqual(
      expect.arrayContaining(['-   greeting: hello', '+   greeting: world']),
    );
    expect(JSON.stringify(diff)).not.toContain('s3cret');
    expect(diff.objects.every((o) => o.skipped === undefined)).toBe(true);
  });

  it('an object over the cap per object is named with the cap, not diffed; the others still are', () => {
    const limits: DiffLimits = { ...DEFAULT_DIFF_LIMITS, maxObjectBytes: 1024 };
    const big = (v: string) =>
      configMap('big', Object.fromEntries(numbered(100).map((l, i) => [`k${i}`, `${l} ${v}`])));
    const diff = diffRenders(
      byObjectKey([big('a'), configMap('small', { x: '1' })]),
      byObjectKey([big('b'), configMap('small', { x: '2' })]),
      limits,
    );
    const bigDiff = diff.objects.find((o) => o.name === 'big');
    expect(bigDiff).toMatchObject({
      change: 'changed',
      skipped: 'diff skipped: object over 1 KiB (cap per object)',
      lines: ['  diff skipped: object over 1 KiB (cap per object)'],
    });
    expect(diff.objects.find((o) => o.name === 'small')?.lines).toEqual(
      expect.arrayContaining(['-   x: "1"', '+   x: "2"']),
    );
  });

  it('an object with more changed lines than the cap is named with that cap', () => {
    const limits: DiffLimits = { ...DEFAULT_DIFF_LIMITS, maxEditLines: 10 };
    const map = (v: string) =>
      configMap('many', Object.fromEntries(numbered(20).map((_, i) => [`k${i}`, `${v}${i}`])));
    const [object] = diffRenders(byObjectKey([map('a')]), byObjectKey([map('b')]), limits).objects;
    expect(object?.skipped).toBe('diff skipped: object has over 10 changed lines (cap per object)');
  });

  it('objects past the request budget of bytes are named with the cap per request', () => {
    const pair = (name: string, v: string) => configMap(name, { value: `${v}${'x'.repeat(300)}` });
    const names = ['a', 'b', 'c'];
    const limits: DiffLimits = { ...DEFAULT_DIFF_LIMITS, maxRequestBytes: 2000 };
    const diff = diffRenders(
      byObjectKey(names.map((n) => pair(n, '1'))),
      byObjectKey(names.map((n) => pair(n, '2'))),
      limits,
    );
    expect(diff.objects.map((o) => o.skipped ?? 'diffed')).toEqual([
      'diffed',
      'diffed',
      'diff skipped: request over 2000 B of objects diffed (cap per request)',
    ]);
  });

  it('objects after the request has spent its diff time are named with the cap per request', () => {
    // A clock that moves 3 s at every reading: the first object is diffed within the request's
    // 10 s, the second finds them spent.
    let now = 0;
    const clock = () => {
      const t = now;
      now += 3_000;
      return t;
    };
    const limits: DiffLimits = { ...DEFAULT_DIFF_LIMITS, requestTimeoutMs: 10_000 };
    const from = byObjectKey([configMap('a', { v: '1' }), configMap('b', { v: '1' })]);
    const to = byObjectKey([configMap('a', { v: '2' }), configMap('b', { v: '2' })]);
    const objects: string[] = [];
    const diff = diffRenders(from, to, limits, clock);
    for (const o of diff.objects) objects.push(`${o.name} ${o.skipped ?? 'diffed'}`);
    expect(objects).toEqual([
      'a diffed',
      'b diff skipped: request over 10000 ms of diffing (cap per request)',
    ]);
  });

  it('formats caps in binary units', () => {
    expect([
      formatBytes(1024 * 1024),
      formatBytes(8 * 1024 * 1024),
      formatBytes(2048),
      formatBytes(1500),
    ]).toEqual(['1 MiB', '8 MiB', '2 KiB', '1500 B']);
  });
});
