import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderCrdFiles } from '../../../domain/api/crd-files.ts';

/**
 * YAML 1.1 reads these words, unquoted, as booleans — and kubectl's YAML decoder (go-yaml) is YAML
 * 1.1: a user's `on: [Failed]` would reach the apiserver as `"true": [Failed]`, and the CRD file
 * itself would list `true` among a schema's required fields (kubeconform refused exactly that). No
 * spec field of convoy's kinds (what users write) may be named one of them; status fields (convoy
 * writes them as JSON) may, as long as the CRD file quotes them.
 */
const YAML11_BOOLEANS = new Set(['y', 'yes', 'n', 'no', 'on', 'off', 'true', 'false']);

interface Schema {
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
}

function fieldNames(schema: Schema | undefined, path: string, out: string[]): string[] {
  if (schema === undefined) return out;
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    out.push(`${path}.${name}`);
    fieldNames(child, `${path}.${name}`, out);
  }
  fieldNames(schema.items, `${path}[]`, out);
  if (typeof schema.additionalProperties === 'object')
    fieldNames(schema.additionalProperties, `${path}.*`, out);
  return out;
}

/** Every mapping key of a parsed document, by path (a key YAML 1.1 read as `true` shows as "true"). */
function keyPaths(value: unknown, path: string, out: string[]): string[] {
  if (Array.isArray(value)) value.forEach((item, i) => keyPaths(item, `${path}[${i}]`, out));
  else if (typeof value === 'object' && value !== null)
    for (const [key, child] of Object.entries(value)) {
      out.push(`${path}.${key}`);
      keyPaths(child, `${path}.${key}`, out);
    }
  return out;
}

describe('CRD field names', () => {
  for (const { file, yaml } of renderCrdFiles()) {
    it(`${file}: no field is named a word YAML 1.1 reads as a boolean`, () => {
      const crd = parse(yaml) as { spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } };
      const names = crd.spec.versions.flatMap((v) => fieldNames(v.schema.openAPIV3Schema, '', []));
      expect(names.length).toBeGreaterThan(0);
      const userWritten = names.filter((n) => !n.startsWith('.status'));
      expect(userWritten.filter((n) => YAML11_BOOLEANS.has(n.split('.').at(-1)!.toLowerCase()))).toEqual([]);
    });

    it(`${file}: every key reads the same as YAML 1.1 (kubectl) and YAML 1.2 (a boolean word is quoted)`, () => {
      expect(keyPaths(parse(yaml, { version: '1.1' }), '', [])).toEqual(keyPaths(parse(yaml), '', []));
    });
  }
});
