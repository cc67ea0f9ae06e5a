// The installation's insecure-registries allowance: `convoy install --print
// --insecure-registries`, the chart's settings and deploy/ all carry CONVOY_INSECURE_REGISTRIES
// from infra/installation-settings.ts, checked as the functions parse it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { installCommand } from '../../../cli/install.ts';

const root = join(import.meta.dirname, '..', '..', '..');

function run(argv: string[]) {
  let out = '';
  const err: string[] = [];
  const code = installCommand(
    argv,
    { out: (t) => (out += t), err: (l) => err.push(l) },
    { CONVOY_RELAY_IMAGE: 'reg.example/convoy-relay:1' },
  );
  const docs = parseAllDocuments(out).map((d) => d.toJS() as { kind: string; data?: Record<string, string> });
  return { code, docs, err };
}

describe('insecure registries at install', () => {
  it('--insecure-registries sets CONVOY_INSECURE_REGISTRIES in the relay settings; default empty (none)', () => {
    const set = run(['--print', '--no-crds', '--insecure-registries', 'registry.lab:5000,10.0.0.7']);
    expect(set.code).toBe(0);
    expect(set.docs.find((d) => d.kind === 'ConfigMap')?.data?.['CONVOY_INSECURE_REGISTRIES']).toBe(
      'registry.lab:5000,10.0.0.7',
    );
    expect(
      run(['--print', '--no-crds']).docs.find((d) => d.kind === 'ConfigMap')?.data?.[
        'CONVOY_INSECURE_REGISTRIES'
      ],
    ).toBe('');
    expect(
      run(['--print', '--no-crds', '--insecure-registries', '*']).docs.find((d) => d.kind === 'ConfigMap')
        ?.data?.['CONVOY_INSECURE_REGISTRIES'],
    ).toBe('*');
  });

  it('a malformed entry is one line, exit 2, nothing printed', () => {
    const r = run(['--print', '--insecure-registries', 'http://registry.lab']);
    expect(r.code).toBe(2);
    expect(r.docs).toEqual([]);
    expect(r.err).toEqual([
      'convoy install: insecureRegistries: "http://registry.lab" is not a registry host[:port] (use * for any, or a comma-separated list)',
    ]);
  });

  it('the chart has settings.CONVOY_INSECURE_REGISTRIES (default "") and deploy/ the entry', () => {
    const values = parse(readFileSync(join(root, 'charts', 'convoy', 'values.yaml'), 'utf8')) as {
      settings: Record<string, string>;
    };
    expect(values.settings['CONVOY_INSECURE_REGISTRIES']).toBe('');
    expect(readFileSync(join(root, 'deploy', 'convoy.yaml'), 'utf8')).toContain(
      'CONVOY_INSECURE_REGISTRIES: ""',
    );
  });
});
