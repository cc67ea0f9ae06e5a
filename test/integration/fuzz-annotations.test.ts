/**
 * A sample of the seeded fuzz cases (test/fuzz/generate.ts) through the real
 * kube-apiserver and convoy's whole runtime: each is either refused at
 * admission (HTTP 422 naming the field) or, within 30 s, has a status whose
 * Applied condition carries a named reason (the pure 1000-case run is
 * test/unit/fuzz/annotations-fuzz.test.ts).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AppliedReason } from '../../domain/status/reasons.ts';
import { generateCases } from '../fuzz/generate.ts';
import { kubeConfigFor } from '../harness/kube.ts';
import { appliedOf, startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';

const SAMPLE = 16;
const NAMED = new Set<string>(Object.values(AppliedReason));

describe('fuzz sample through the real apiserver', () => {
  let env: RuntimeEnv;
  beforeAll(async () => {
    env = await startRuntimeEnv(kubeConfigFor(inject('kubeconfigPath')), 'fuzz', {
      relayTickMs: 200,
      visibilityTimeoutSeconds: 5,
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  it(`${SAMPLE} generated cases: refused at admission naming a field, or a named Applied reason within 30 s`, async () => {
    const cases = generateCases(1000)
      .filter((_, i) => i % Math.floor(1000 / SAMPLE) === 0)
      .slice(0, SAMPLE);
    const created: string[] = [];
    const endings: Record<string, number> = {};
    for (const c of cases) {
      const name = `fuzz-${c.index}`;
      const annotations = Object.entries(c.objectAnnotations)
        .map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`)
        .join('\n');
      const repo = await env.repo(name, {
        'cm.yaml': `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${annotations === '' ? '' : `  annotations:\n${annotations}\n`}data: {k: v}\n`,
      });
      try {
        await env.api.create(
          'Release',
          env.ns.name,
          name,
          {
            cluster: { name: 'local' },
            targetNamespace: env.ns.name,
            source: { git: { url: repo.url, ref: { branch: 'main' } } },
            ...c.spec,
          },
          { annotations: c.annotations },
        );
        created.push(name);
      } catch (error) {
        const body = String((error as { body?: unknown }).body ?? error);
        expect(body, `case ${c.index}`).toMatch(/spec\.|metadata\./);
        endings['refused at admission'] = (endings['refused at admission'] ?? 0) + 1;
      }
    }
    for (const name of created) {
      const reason = await until(
        `${name} has a named Applied reason`,
        async () => {
          const applied = appliedOf(await env.getRelease(name));
          return applied !== undefined && NAMED.has(applied.reason) ? applied.reason : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250 },
      );
      endings[reason] = (endings[reason] ?? 0) + 1;
    }
    // No run crashed: nothing was logged at error level by the functions.
    expect(env.logs.filter((l) => l.level === 'error' && l['fn'] !== undefined)).toEqual([]);
    process.stdout.write(`fuzz sample endings: ${JSON.stringify(endings)}\n`);
    expect(Object.values(endings).reduce((a, b) => a + b, 0)).toBe(SAMPLE);
  });
});
