import { z } from 'zod';

export { API_GROUP, API_VERSION, GROUP_VERSION } from './group-version.ts';

/** Marks a field whose content Kubernetes must keep as-is (Helm values, pod templates, patches). */
export const PRESERVE_UNKNOWN = { 'x-kubernetes-preserve-unknown-fields': true } as const;

/** A CEL rule for the CRD's `x-kubernetes-validations`. */
export interface CelRule {
  rule: string;
  message: string;
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

export const celRules = (...rules: CelRule[]) => ({ 'x-kubernetes-validations': rules });

/** Exactly one of the named optional fields must be set. */
export const exactlyOneOf = (fields: readonly string[], what = fields.join(', ')): CelRule => ({
  rule: `[${fields.map((f) => `has(self.${f})`).join(', ')}].exists_one(x, x)`,
  message: `exactly one of ${what} must be set`,
});

const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$';

/** A Go-style duration such as 30s, 5m or 1h30m. Negative durations are refused. */
export const duration = (description: string) =>
  z
    .string()
    .max(64)
    .regex(new RegExp(DURATION_PATTERN), {
      message: 'must be a non-negative duration such as 30s, 5m or 1h30m',
    })
    .describe(`${description} A duration such as 30s, 5m or 1h30m; never negative.`);

export const objectName = (description: string) =>
  z
    .string()
    .min(1)
    .max(253)
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { message: 'must be a DNS subdomain name' })
    .describe(description);

export const localObjectReference = (description: string) =>
  z.object({ name: objectName('Name of the object in the same namespace.') }).describe(description);

/**
 * The namespace of a reference that may name another namespace. Whether it may is the
 * installation's policy (domain/tenancy/policy.ts); by default only the referring object's own
 * namespace is allowed.
 */
export const referenceNamespace = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: 'must be a DNS label' })
  .optional()
  .describe(
    "Namespace of the object; default the referring object's own. Another namespace only where the installation allows cross-namespace references.",
  );

export const namespacedObjectReference = (description: string) =>
  z.object({ name: objectName('Name of the object.'), namespace: referenceNamespace }).describe(description);

export const stringMap = (description: string) => z.record(z.string(), z.string()).describe(description);

/** A metav1.Condition, as every convoy writer sets it. */
export const conditionSchema = z
  .object({
    type: z.string().min(1).max(316).describe('Type of the condition, e.g. Applied, InSync or Healthy.'),
    status: z.enum(['True', 'False', 'Unknown']).describe('Status of the condition.'),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .describe('A CamelCase reason for the last transition; see the status specification.'),
    message: z.string().max(32768).describe('A human-readable message about the transition.'),
    lastTransitionTime: z.iso.datetime().describe('When status, reason or message last changed.'),
    observedGeneration: z
      .number()
      .int()
      .min(0)
      .describe('The metadata.generation of the spec the condition was computed from.'),
  })
  .describe('A condition of the object.');

export type Condition = z.infer<typeof conditionSchema>;

export const conditionsList = z
  .array(conditionSchema)
  .max(32)
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
  .describe('Conditions, one per type. Each condition has exactly one writer (field manager).');

export const relativePath = (description: string) =>
  z
    .string()
    .max(1024)
    .meta(
      celRules({
        rule: "!self.startsWith('/') && !self.matches('(^|/)[.][.](/|$)')",
        message: "must be a relative path without '..' segments",
      }),
    )
    .describe(description);
