import { z } from 'zod';
import { API_GROUP, API_VERSION } from './common.ts';
import type { KindDefinition } from './kinds.ts';

type JsonSchema = Record<string, unknown>;

const INT_BOUND = 9007199254740991;

/** Keys whose values are schemas; every other key (default, enum, x-kubernetes-*) holds data. */
const SCHEMA_KEYS = new Set(['items', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'not']);

/**
 * Turns zod's JSON Schema into a Kubernetes structural schema: no $schema, no
 * unrepresentable bounds, `{}` (any value) as preserve-unknown-fields, no
 * additionalProperties next to properties, no regex on date-time strings.
 */
export function toStructural(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toStructural);
  if (node === null || typeof node !== 'object') return node;
  const source = node as JsonSchema;
  if (Object.keys(source).length === 0 || isOnlyDescription(source)) {
    return { ...source, 'x-kubernetes-preserve-unknown-fields': true };
  }
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(source)) {
    if (key === '$schema' || key === 'id') continue;
    if ((key === 'minimum' || key === 'maximum') && Math.abs(value as number) >= INT_BOUND) continue;
    if (key === 'pattern' && source['format'] === 'date-time') continue;
    if (key === 'additionalProperties') {
      if (value === false) continue;
      const inner = value as JsonSchema;
      if (Object.keys(inner).length === 0 || source['x-kubernetes-preserve-unknown-fields'] === true) {
        out['x-kubernetes-preserve-unknown-fields'] = true;
        continue;
      }
    }
    if (key === 'properties') {
      out[key] = Object.fromEntries(
        Object.entries(value as JsonSchema).map(([k, v]) => [k, toStructural(v)]),
      );
      continue;
    }
    out[key] = SCHEMA_KEYS.has(key) ? toStructural(value) : value;
  }
  return out;
}

function isOnlyDescription(schema: JsonSchema): boolean {
  const keys = Object.keys(schema).filter((k) => k !== 'description' && k !== 'default');
  return keys.length === 0;
}

export function openApiSchemaOf(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' });
  return toStructural(json) as JsonSchema;
}

/** The CustomResourceDefinition of one kind, generated from its zod schemas. */
export function crdOf(def: KindDefinition): JsonSchema {
  const properties: JsonSchema = {
    apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this object.' },
    kind: { type: 'string', description: 'Kind is a string value representing the REST resource.' },
    metadata: { type: 'object' },
    spec: openApiSchemaOf(def.spec),
  };
  if (def.status) properties['status'] = openApiSchemaOf(def.status);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${API_GROUP}` },
    spec: {
      group: API_GROUP,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        ...(def.shortNames.length > 0 ? { shortNames: def.shortNames } : {}),
        categories: ['convoy'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: API_VERSION,
          served: true,
          storage: true,
          ...(def.status ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: def.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: def.description,
              required: ['spec'],
              properties,
              ...(def.rootRules === undefined ? {} : { 'x-kubernetes-validations': def.rootRules }),
            },
          },
        },
      ],
    },
  };
}
