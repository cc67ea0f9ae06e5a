/**
 * Health rules: pure functions from live objects (plain JSON) to health.
 * Used by the health function (Healthy condition, healthSummary) and by
 * reconcile's wave gate. See README.md for the rule table.
 */
export type { HealthCheck, HealthRule, HealthState, KubeObject, ObjectHealth } from './types.ts';
export { aggregate, assessObject, formatDuration, type AssessOptions } from './assess.ts';
export { HEALTH_STATES_WORST_FIRST, healthSeverity } from './severity.ts';
export {
  checkApplies,
  compileChecks,
  evaluateChecks,
  type CheckCompileError,
  type CompileChecksResult,
  type CompiledCheck,
  type CompiledChecks,
  type CompileChecksOptions,
} from './cel-checks.ts';
export { createCelRuntime, DEFAULT_CEL_LIMITS, type CelLimits, type CelRuntime } from './cel-runtime.ts';
export {
  MAX_SUMMARY_MESSAGE_LENGTH,
  MAX_SUMMARY_OBJECTS,
  summarize,
  type HealthEntry,
  type HealthObjectRef,
  type HealthSummary,
  type HealthSummaryObject,
} from './summary.ts';
export { builtinRule } from './rules/registry.ts';
export { healthIsExistence } from './existence-only.ts';
export { IN_PROGRESS_REASONS } from './rules/generic.ts';
