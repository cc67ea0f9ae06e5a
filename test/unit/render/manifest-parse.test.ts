import { describe, expect, it } from 'vitest';
import { RenderError } from '../../../domain/render/errors.ts';
import { MAX_MANIFEST_BYTES, parseManifests } from '../../../domain/render/manifest-parse.ts';

/** This thread's CPU milliseconds since `started` (process.threadCpuUsage()). */
const cpuMsSince = (started: NodeJS.CpuUsage): number => {
  const used = process.threadCpuUsage(started);
  return (used.user + used.system) / 1000;
};

const cm = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  k: v\n`;

function parseError(text: string, file = 'apps/web.yaml'): RenderError {
  try {
    parseManifests(text, { file });
  } catch (error) {
    expect(error).toBeInstanceOf(RenderError);
    return error as RenderError;
  }
  throw new Error('expected a RenderError');
}

describe('parseManifests', () => {
  it('reads multi-document YAML in file order', () => {
    const objects = parseManifests(`${cm('a')}---\n${cm('b')}---\n${cm('c')}`, { file: 'a.yaml' });
    expect(objects.map((o) => o.metadata.name)).toEqual(['a', 'b', 'c']);
    expect(objects[0]).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a' },
      data: { k: 'v' },
    });
  });

  it('skips empty documents and comment-only documents', () => {
    const text = `---\n---\n# only a comment\n---\n${cm('a')}---\n\n---\n${cm('b')}---\n`;
    expect(parseManifests(text, { file: 'a.yaml' }).map((o) => o.metadata.name)).toEqual(['a', 'b']);
    expect(parseManifests('', { file: 'empty.yaml' })).toEqual([]);
    expect(parseManifests('# nothing here\n', { file: 'empty.yaml' })).toEqual([]);
  });

  it('reads a JSON object, a JSON array and a JSON List', () => {
    const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } };
    const obj2 = { ...obj, metadata: { name: 'b' } };
    expect(parseManifests(JSON.stringify(obj), { file: 'a.json' })).toEqual([obj]);
    expect(parseManifests(JSON.stringify([obj, obj2]), { file: 'a.json' })).toEqual([obj, obj2]);
    const list = { apiVersion: 'v1', kind: 'List', items: [obj, obj2] };
    expect(parseManifests(JSON.stringify(list), { file: 'list.json' })).toEqual([obj, obj2]);
  });

  it('reads a YAML kind: List', () => {
    const text = `apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n`;
    expect(parseManifests(text, { file: 'a.yaml' }).map((o) => o.metadata.name)).toEqual(['a']);
  });

  it('reads scalars as kubectl does (YAML 1.1 booleans and octals; dates stay strings)', () => {
    const [obj] = parseManifests(
      `${cm('a')}x:\n  flag: yes\n  mode: 0755\n  date: 2024-01-01\n  time: 1:30\n`,
      { file: 'a.yaml' },
    );
    expect(obj?.x).toEqual({ flag: true, mode: 493, date: '2024-01-01', time: '1:30' });
  });

  it('resolves aliases into independent copies', () => {
    const text = `${cm('a')}one: &shared {x: 1}\ntwo: *shared\n`;
    const [obj] = parseManifests(text, { file: 'a.yaml' });
    expect(obj?.two).toEqual({ x: 1 });
    expect(obj?.two).not.toBe(obj?.one);
  });

  it('error: a document that is not a mapping names file and document', () => {
    const error = parseError(`${cm('a')}---\n- just\n- a list\n`);
    expect(error.message).toMatch(/^apps\/web\.yaml: document 2 \(line 8\): is a list, not a mapping/);
    expect(error.file).toBe('apps/web.yaml');
    expect(error.docIndex).toBe(1);
    expect(parseError('just a string\n').message).toContain(
      'document 1 (line 1): is a string, not a mapping',
    );
  });

  it('error: missing kind names file, document and field', () => {
    const error = parseError(`${cm('a')}---\n---\napiVersion: v1\nmetadata: {name: b}\n`);
    expect(error.message).toBe('apps/web.yaml: document 3 (line 9): missing kind');
    expect(error.docIndex).toBe(2);
    expect(error.line).toBe(9);
  });

  it('error: missing apiVersion names the field', () => {
    expect(parseError('kind: ConfigMap\nmetadata: {name: a}\n').message).toBe(
      'apps/web.yaml: document 1 (line 1): missing apiVersion',
    );
  });

  it('error: missing metadata.name names the field', () => {
    expect(parseError('apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {a: b}}\n').message).toBe(
      'apps/web.yaml: document 1 (line 1): missing metadata.name',
    );
    expect(parseError('apiVersion: v1\nkind: ConfigMap\n').message).toContain('missing metadata.name');
    expect(parseError('apiVersion: v1\nkind: Pod\nmetadata: {generateName: x-}\n').message).toContain(
      'generateName is not supported',
    );
  });

  it('error: a non-string label value names the label', () => {
    expect(
      parseError(`apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {version: 1.0}}\n`).message,
    ).toContain('metadata.labels["version"] must be a string, not a number (quote the value in YAML)');
  });

  it('error: a JSON List item without a field names document and item', () => {
    const text = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [{ apiVersion: 'v1', kind: 'A', metadata: { name: 'a' } }, { kind: 'B' }],
    });
    expect(parseError(text, 'l.json').message).toBe('l.json: document 1, item 2: missing apiVersion');
  });

  it('error: YAML syntax error names file, document and line', () => {
    const error = parseError(`${cm('a')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b\n`);
    expect(error.message).toMatch(/^apps\/web\.yaml: document 2 \(line 11\): YAML syntax error: /);
    expect(error.line).toBe(11);
  });

  it('error: JSON syntax error names the file', () => {
    expect(parseError('{"apiVersion": ', 'a.json').message).toMatch(
      /^a\.json: document 1: JSON syntax error: /,
    );
  });

  it('error: a key given twice in a hand-written file', () => {
    expect(
      parseError('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nkind: Secret\n').message,
    ).toMatch(/document 1 .*YAML syntax error: Map keys must be unique/);
    const [obj] = parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nkind: Secret\n', {
      file: 'helm template x',
      allowDuplicateKeys: true,
    });
    expect(obj?.kind).toBe('Secret');
  });

  it('error: an alias bomb (billion laughs) is rejected quickly', () => {
    let bomb =
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\na0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    for (let i = 1; i < 10; i++)
      bomb += `a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(',')}]\n`;
    // This thread's CPU time, not wall time: a loaded host stretches the latter. An
    // expanded bomb would take 10^10 nodes; the alias limit stops it in a few milliseconds.
    const started = process.threadCpuUsage();
    const error = parseError(bomb);
    expect(cpuMsSince(started)).toBeLessThan(500);
    expect(error.message).toMatch(/^apps\/web\.yaml: document 1 \(line 1\): too many YAML alias expansions/);
  });

  it('error: an oversized file is refused before parsing', () => {
    const big = `${cm('a')}x: "${'x'.repeat(MAX_MANIFEST_BYTES)}"\n`;
    const started = process.threadCpuUsage();
    expect(parseError(big, 'huge.yaml').message).toBe(
      'huge.yaml: the file is larger than 10 MiB; split it into smaller files',
    );
    expect(cpuMsSince(started)).toBeLessThan(200);
    expect(() => parseManifests(cm('a'), { file: 'a.yaml', maxBytes: 10 })).toThrow(/larger than 10 bytes/);
  });

  it('error: values JSON cannot carry (binary, infinity)', () => {
    expect(parseError(`${cm('a')}blob: !!binary aGVsbG8=\n`).message).toContain(
      'blob holds binary data (!!binary)',
    );
    expect(parseError(`${cm('a')}spec: {size: .inf}\n`).message).toContain('spec.size is Infinity');
  });

  it("names helm's Source comment in errors", () => {
    const text = `---\n# Source: web/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n`;
    expect(parseError(text, 'helm template web').message).toBe(
      'helm template web: document 1 (line 3) (Source: web/templates/cm.yaml): missing metadata.name',
    );
  });
});
