/**
 * spec.dependsOn and spec.dependencyPolicy of a Release (and of a ReleaseSet's template, whose
 * strings may name the dependency on the same Cluster with `${cluster.name}`: the children are
 * validated with this schema once substituted). What a dependency's condition means is decided
 * in domain/dependencies/evaluate.ts; docs/dependencies.md is the user's account.
 */
import { z } from 'zod';
import { celRules, duration, objectName, type CelRule } from './common.ts';

/** The most entries spec.dependsOn takes: a graph is named, not enumerated. */
export const MAX_DEPENDENCIES = 64;

export const dependencyKinds = ['Release', 'ReleaseSet'] as const;
export const dependencyConditions = ['Ready', 'Healthy', 'Applied', 'Succeeded'] as const;

export const dependencySchema = z
  .object({
    kind: z.enum(dependencyKinds).default('Release').describe('Release (the default) or ReleaseSet.'),
    name: objectName('Name of the Release or ReleaseSet this one waits for.'),
    namespace: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { message: 'must be a DNS label' })
      .optional()
      .describe(
        "Namespace of the dependency; default this Release's own. Another namespace only when that namespace allows it " +
          '(label convoy.dev/dependable-from: all or this namespace, or dependable-from.convoy.dev/<this namespace>: "true").',
      ),
    condition: z
      .enum(dependencyConditions)
      .default('Ready')
      .describe(
        "Ready (the default): convoy's combined verdict at the dependency's current render. Healthy, Applied: that condition True " +
          'for its current generation. Succeeded (ReleaseSet only): the rollout of its current revision succeeded.',
      ),
  })
  .meta(
    celRules(
      {
        rule: "self.kind == 'ReleaseSet' || self.condition != 'Succeeded'",
        message: 'condition Succeeded is for a ReleaseSet; a Release uses Ready, Healthy or Applied',
      },
      {
        rule: "self.kind == 'Release' || self.condition == 'Ready' || self.condition == 'Succeeded'",
        message: 'a ReleaseSet dependency takes condition Ready or Succeeded',
      },
    ),
  )
  // The same rules for what zod checks (a ReleaseSet's generated children, objects read back).
  .refine((d) => d.kind === 'ReleaseSet' || d.condition !== 'Succeeded', {
    message: 'condition Succeeded is for a ReleaseSet; a Release uses Ready, Healthy or Applied',
    path: ['condition'],
  })
  .refine((d) => d.kind === 'Release' || d.condition === 'Ready' || d.condition === 'Succeeded', {
    message: 'a ReleaseSet dependency takes condition Ready or Succeeded',
    path: ['condition'],
  })
  .describe('A Release or ReleaseSet whose verdict this Release waits for before it applies a new render.');

export type Dependency = z.infer<typeof dependencySchema>;
export type DependencyKind = (typeof dependencyKinds)[number];
export type DependencyCondition = (typeof dependencyConditions)[number];

export const dependsOnSchema = z
  .array(dependencySchema)
  .max(MAX_DEPENDENCIES)
  .optional()
  .describe(
    'Releases and ReleaseSets that must meet their condition before this Release applies a new render (Applied False/DependencyNotReady while they do not).',
  );

export const dependencyPolicySchema = z
  .object({
    timeout: duration(
      'Longest wait for the same dependency in the same state; then Applied False/DependencyTimeout, retried with backoff. Absent: no limit.',
    ).optional(),
    upgradeOrdering: z
      .boolean()
      .default(true)
      .describe(
        'true: a new render also waits while a dependency has a newer render of its own in flight. false: a dependency applied once counts while it upgrades.',
      ),
  })
  .describe('How this Release waits for spec.dependsOn.');

export type DependencyPolicy = z.infer<typeof dependencyPolicySchema>;

/**
 * A Release naming itself (same name, no other namespace, kind Release): refused at admission.
 * CEL sees only metadata.name of the object, so a self-reference that spells out its own
 * namespace is found by the reconcile's cycle check instead (DependencyCycle).
 */
export const noSelfDependency: CelRule = {
  rule: "!has(self.spec.dependsOn) || self.spec.dependsOn.all(d, !(d.name == self.metadata.name && !has(d.namespace) && (!has(d.kind) || d.kind == 'Release')))",
  message: 'spec.dependsOn names this Release itself',
};
