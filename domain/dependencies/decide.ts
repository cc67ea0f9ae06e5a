/**
 * Whether a Release may apply its new render, given its spec.dependsOn (README.md). In order:
 * every dependency in another namespace must be allowed (tenancy.ts: DependencyNotAllowed);
 * the graph must have no way back to the Release and stay within bounds (graph.ts:
 * DependencyCycle, DependencyTooDeep) — checked whether or not there is a new render, so every
 * member of a cycle says so; then, only when there is a new render to apply, each dependency is
 * found (DependencyNotFound) and judged (evaluate.ts); the first unmet one is named
 * (DependencyNotReady, or DependencyTimeout once dependencyPolicy.timeout has passed). A render
 * already applied never waits: a dependency that flaps does not make its dependents thrash
 * ("ready at the moment of apply").
 *
 * Only the class of an unmet dependency (ready or not, failed, upgrading) reaches the message,
 * the same words whatever its namespace, so the message stays the same while the wait does and a
 * tenant learns nothing more of another than that namespace allowed.
 */
import type { Dependency } from '../api/depends-on.ts';
import type { Release } from '../api/objects.ts';
import type { Condition } from '../api/common.ts';
import { describeClass, evaluateRelease, evaluateReleaseSet, type Evaluation } from './evaluate.ts';
import { checkGraph, dependencyNamespace } from './graph.ts';
import type { DependencyReads } from './reads.ts';
import { DEPENDABLE_FROM_RULE, dependableFrom } from './tenancy.ts';

export type DependencyStop =
  | 'dependencyNotReady'
  | 'dependencyNotFound'
  | 'dependencyCycle'
  | 'dependencyTooDeep'
  | 'dependencyTimeout'
  | 'dependencyNotAllowed';

export type DependencyDecision =
  | { readonly kind: 'met' }
  | { readonly kind: 'stop'; readonly stop: DependencyStop; readonly message: string };

export interface DependencyGate {
  readonly release: Release;
  readonly reads: DependencyReads;
  readonly now: Date;
  /** Whether the run has a render to apply that is not applied yet (only then does it wait). */
  readonly newRender: boolean;
  /** The Applied condition as the Release carries it (the wait's start, for the timeout). */
  readonly applied: Condition | undefined;
  /** dependencyPolicy.timeout in ms; undefined: no limit. */
  readonly timeoutMs: number | undefined;
}

const stop = (name: DependencyStop, message: string): DependencyDecision => ({
  kind: 'stop',
  stop: name,
  message,
});

/** `Release platform/cert-manager (Ready)`, as every message names a dependency. */
export function describeDependency(dep: Dependency, fromNamespace: string): string {
  return `${dep.kind} ${dependencyNamespace(dep, fromNamespace)}/${dep.name} (${dep.condition})`;
}

export async function decideDependencies(gate: DependencyGate): Promise<DependencyDecision> {
  const { release, reads } = gate;
  const deps = release.spec.dependsOn ?? [];
  if (deps.length === 0) return { kind: 'met' };
  const namespace = release.metadata.namespace ?? 'default';
  const refused = await firstRefused(deps, namespace, reads);
  if (refused !== undefined) return refused;
  const graph = await checkGraph(release, reads);
  if (graph.kind === 'cycle')
    return stop(
      'dependencyCycle',
      `spec.dependsOn forms a cycle: ${graph.members.join(' → ')}; no member can become ready first. Remove one of these dependencies`,
    );
  if (graph.kind === 'tooDeep') return stop('dependencyTooDeep', graph.message);
  if (!gate.newRender) return { kind: 'met' };
  for (const [index, dep] of deps.entries()) {
    const judged = await evaluate(
      dep,
      namespace,
      reads,
      release.spec.dependencyPolicy?.upgradeOrdering ?? true,
    );
    if (judged === undefined)
      return stop(
        'dependencyNotFound',
        `spec.dependsOn[${index}] names ${dep.kind} ${dependencyNamespace(dep, namespace)}/${dep.name}, which does not exist`,
      );
    if (!judged.met) return unmet(gate, dep, namespace, judged);
  }
  return { kind: 'met' };
}

async function firstRefused(
  deps: readonly Dependency[],
  namespace: string,
  reads: DependencyReads,
): Promise<DependencyDecision | undefined> {
  for (const [index, dep] of deps.entries()) {
    const to = dependencyNamespace(dep, namespace);
    if (to === namespace) continue;
    if (dependableFrom(namespace, to, await reads.namespaceLabels(to))) continue;
    return stop(
      'dependencyNotAllowed',
      `spec.dependsOn[${index}] names ${dep.kind} ${to}/${dep.name}, and namespace ${to} does not allow dependencies from namespace ${namespace} ` +
        `(${DEPENDABLE_FROM_RULE}); depend on objects of ${namespace}, or ask the owners of ${to} to label it`,
    );
  }
  return undefined;
}

/** The dependency judged; undefined when it does not exist. */
export async function evaluate(
  dep: Dependency,
  fromNamespace: string,
  reads: DependencyReads,
  upgradeOrdering: boolean,
): Promise<Evaluation | undefined> {
  const namespace = dependencyNamespace(dep, fromNamespace);
  if (dep.kind === 'ReleaseSet') {
    const set = await reads.releaseSet(namespace, dep.name);
    return set === undefined ? undefined : evaluateReleaseSet(dep, set, upgradeOrdering);
  }
  const found = await reads.release(namespace, dep.name);
  return found === undefined ? undefined : evaluateRelease(dep, found, upgradeOrdering);
}

function unmet(
  gate: DependencyGate,
  dep: Dependency,
  namespace: string,
  judged: Evaluation,
): DependencyDecision {
  const named = describeDependency(dep, namespace);
  const waiting = `waits for ${named}: ${describeClass(judged.class)}`;
  if (gate.timeoutMs === undefined) return stop('dependencyNotReady', waiting);
  const applied = gate.applied;
  if (applied?.reason === 'DependencyTimeout')
    return stop('dependencyTimeout', timedOut(gate, named, judged));
  const since =
    applied?.reason === 'DependencyNotReady' && applied.message === waiting
      ? Date.parse(applied.lastTransitionTime)
      : gate.now.getTime();
  if (gate.now.getTime() - since > gate.timeoutMs)
    return stop('dependencyTimeout', timedOut(gate, named, judged));
  return stop('dependencyNotReady', waiting);
}

function timedOut(gate: DependencyGate, named: string, judged: Evaluation): string {
  const timeout = gate.release.spec.dependencyPolicy?.timeout ?? '';
  return `${named} was not ready within dependencyPolicy.timeout ${timeout}: ${describeClass(judged.class)}`;
}
