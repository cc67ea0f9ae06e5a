import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderCrdFiles } from '../../../domain/api/crd-files.ts';
import { parseRelease } from '../../../domain/api/objects.ts';
import { DEFAULT_RETRY_BACKOFF, retryDelayMs } from '../../../domain/runtime/backoff.ts';

interface Schema {
  description?: string;
  properties?: Record<string, Schema>;
}

const crdDir = join(import.meta.dirname, '..', '..', '..', 'config', 'crds');

describe('CRDs generated from the zod schemas', () => {
  for (const { file, yaml } of renderCrdFiles()) {
    it(`committed ${file} equals what the schemas generate (run npm run gen:crds)`, async () => {
      expect(await readFile(join(crdDir, file), 'utf8')).toBe(yaml);
    });
  }

  it("spec.syncPolicy.retryBackoff says what happens without it: the runtime's default backoff (kubectl explain shows it)", () => {
    const release = parse(renderCrdFiles().find((f) => f.file.startsWith('releases.'))!.yaml) as {
      spec: { versions: { schema: { openAPIV3Schema: Schema } }[] };
    };
    const retryBackoff =
      release.spec.versions[0]?.schema.openAPIV3Schema.properties?.['spec']?.properties?.['syncPolicy']
        ?.properties?.['retryBackoff'];
    const description = retryBackoff?.description ?? '';
    const { initialMs, factor, maxMs, jitter } = DEFAULT_RETRY_BACKOFF;
    const duration = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`);
    expect(description).toContain(
      `Absent (the default): initial ${duration(initialMs)}, factor ${factor}, max ${duration(maxMs)}, with equal jitter`,
    );
    expect(jitter).toBe(0.5); // "equal jitter": [d/2, d]
    expect(description).toContain('drawn from [d/2, d]');
    // The examples in the text are the runtime's own delays (top of each range; the bottom is half of it).
    const range = (attempt: number) => `${retryDelayMs(attempt) / 2000}–${retryDelayMs(attempt) / 1000}s`;
    expect(description).toContain(`first retry after ${range(1)}`);
    expect(description).toContain(`eighth after ${range(8)}`);
    expect(description).toContain(`every later one after ${range(9)}`);
    expect(retryDelayMs(50)).toBe(retryDelayMs(9));
    expect(description).toContain('followed exactly (no jitter)');
  });

  it('declares conditions as a list-map keyed by type', () => {
    const release = renderCrdFiles().find((f) => f.file.startsWith('releases.'))!;
    expect(release.yaml).toMatch(/conditions:\n(\s+).*\n(?:\1.*\n)*?\1x-kubernetes-list-type: map/);
    expect(release.yaml).toContain('x-kubernetes-list-map-keys:\n');
  });
});

describe('zod parsing of a Release', () => {
  const base = {
    apiVersion: 'convoy.dev/v1alpha1',
    kind: 'Release',
    metadata: { name: 'web', namespace: 'team-a' },
    spec: {
      cluster: { name: 'prod' },
      source: { git: { url: 'https://git.example/x.git', ref: { branch: 'main' } } },
    },
  };

  it('applies the defaults of the API', () => {
    const parsed = parseRelease(base);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.spec.syncPolicy).toMatchObject({ mode: 'Automatic', interval: '5m', prune: true });
    expect(parsed.value.spec.content.type).toBe('Manifests');
    expect(parsed.value.spec.source.git?.path).toBe('.');
  });

  it('names the field of a bad duration', () => {
    const parsed = parseRelease({ ...base, spec: { ...base.spec, syncPolicy: { interval: '-5m' } } });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error).toContain('spec.syncPolicy.interval');
    expect(parsed.error).toContain('non-negative duration');
  });

  it('names the field of an unknown content type', () => {
    const parsed = parseRelease({ ...base, spec: { ...base.spec, content: { type: 'Ytt' } } });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain('spec.content.type');
  });
});
