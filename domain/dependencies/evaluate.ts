/**
 * One dependency judged from the object it names, as found now (domain/dependencies/README.md):
 *
 * - Ready (a Release): convoy's combined verdict (domain/status/verdict.ts) is ready — at the
 *   dependency's current render, never an older render's health.
 * - Healthy, Applied (a Release): that condition is True for the current metadata.generation
 *   (Healthy not Pending).
 * - Ready, Succeeded (a ReleaseSet): its verdict is ready (domain/fleet/set-verdict.ts); Succeeded
 *   also wants the succeeded revision to be the current one.
 *
 * Upgrade ordering (dependencyPolicy.upgradeOrdering, default true): a dependency with a newer
 * render of its own in flight — a generation not yet handled, lastAttempted.renderRef not the
 * applied one, a Progressing rollout — is unmet, even for Healthy or Applied, whose conditions
 * may still be True from the previous render. Without it, a dependency that was applied once
 * counts while it upgrades.
 */
import type { Dependency } from '../api/depends-on.ts';
import type { Release } from '../api/objects.ts';
import type { ReleaseSet } from '../api/release-set.ts';
import { setVerdict } from '../fleet/set-verdict.ts';
import { ConditionType, HealthyReason } from '../status/reasons.ts';
import { combinedVerdict } from '../status/verdict.ts';

/** What the dependent learns; `class` is all that may cross a namespace (tenancy.ts). */
export type DependencyClass = 'met' | 'waiting' | 'failed' | 'upgrading' | 'suspended';

export interface Evaluation {
  readonly met: boolean;
  readonly class: DependencyClass;
  /** The dependency's own words (its verdict's message): for the dependent's namespace and `convoy deps` only. */
  readonly detail: string;
}

const evaluation = (cls: DependencyClass, detail: string): Evaluation => ({
  met: cls === 'met',
  class: cls,
  detail,
});

/**
 * A newer render of the Release is on its way: its spec not handled yet, a render made but not
 * applied, a last reconcile that stopped before applying (a render that could not be made yet),
 * or a rollout under way.
 */
export function renderInFlight(release: Release): string | undefined {
  const generation = release.metadata.generation ?? 0;
  const status = release.status;
  const observed = status?.observedGeneration ?? -1;
  if (observed < generation)
    return `generation ${generation} is not handled yet (status.observedGeneration ${observed < 0 ? 'none' : observed})`;
  const attempt = status?.lastAttempted;
  const attempted = attempt?.renderRef;
  const applied = status?.lastSuccessful?.renderRef;
  if (attempted !== undefined && attempted !== applied)
    return `render ${attempted} is not applied yet (lastSuccessful ${applied ?? 'none'})`;
  if (applied !== undefined && attempt !== undefined && attempt.phase !== 'Succeeded')
    return `its last reconcile did not apply a render (phase ${attempt.phase === '' ? 'empty: a wait' : attempt.phase})`;
  const rollout = status?.rollout;
  if (rollout?.state === 'Progressing' && rollout.renderRef === applied)
    return `the rollout of ${applied} is Progressing`;
  return undefined;
}

export function evaluateRelease(dep: Dependency, release: Release, upgradeOrdering: boolean): Evaluation {
  const inFlight = renderInFlight(release);
  const appliedOnce = release.status?.lastSuccessful?.renderRef !== undefined;
  if (inFlight !== undefined && !upgradeOrdering && appliedOnce)
    return evaluation('met', `${inFlight}; its previous render counts (upgradeOrdering: false)`);
  if (dep.condition === 'Ready') {
    const verdict = combinedVerdict(release);
    if (verdict.ready) return evaluation('met', verdict.message);
    if (verdict.kind === 'suspended') return evaluation('suspended', verdict.message);
    if (verdict.kind === 'failure') return evaluation('failed', verdict.message);
    return evaluation(inFlight !== undefined && appliedOnce ? 'upgrading' : 'waiting', verdict.message);
  }
  const type = dep.condition === 'Healthy' ? ConditionType.Healthy : ConditionType.Applied;
  const condition = release.status?.conditions?.find((c) => c.type === type);
  const generation = release.metadata.generation ?? 0;
  if (condition === undefined) return evaluation('waiting', `${type} is not reported yet`);
  const said = `${type} is ${condition.status} (${condition.reason})`;
  if (condition.observedGeneration !== generation)
    return evaluation('waiting', `${said} for generation ${condition.observedGeneration}, not ${generation}`);
  if (condition.status === 'True' && condition.reason !== HealthyReason.Pending) {
    if (inFlight !== undefined && upgradeOrdering) return evaluation('upgrading', `${said}, but ${inFlight}`);
    return evaluation('met', said);
  }
  return evaluation(
    condition.status === 'False' && !isWaitLike(condition.reason) ? 'failed' : 'waiting',
    said,
  );
}

function isWaitLike(reason: string): boolean {
  return (
    reason.startsWith('WaitingFor') ||
    reason === 'Pending' ||
    reason === 'Progressing' ||
    reason.startsWith('Dependency')
  );
}

export function evaluateReleaseSet(dep: Dependency, set: ReleaseSet, upgradeOrdering: boolean): Evaluation {
  const verdict = setVerdict(set);
  const status = set.status;
  const current = status?.revision?.id;
  const succeededBefore = status?.lastSucceededRevision !== undefined;
  if (verdict.kind === 'ready') {
    if (dep.condition === 'Succeeded' && status?.lastSucceededRevision?.id !== current)
      return evaluation('upgrading', `revision ${current ?? '?'} has not succeeded yet`);
    return evaluation('met', verdict.message);
  }
  if (!upgradeOrdering && succeededBefore && verdict.kind === 'wait')
    return evaluation('met', `${verdict.message}; its previous revision counts (upgradeOrdering: false)`);
  if (verdict.kind === 'failure') return evaluation('failed', `${verdict.word}: ${verdict.message}`);
  if (verdict.kind === 'held') return evaluation('suspended', `${verdict.word}: ${verdict.message}`);
  return evaluation(succeededBefore ? 'upgrading' : 'waiting', `${verdict.word}: ${verdict.message}`);
}

/** How a class reads in the dependent's Applied message (the same words whatever namespace). */
export function describeClass(cls: DependencyClass): string {
  switch (cls) {
    case 'met':
      return 'ready';
    case 'waiting':
      return 'not ready yet';
    case 'failed':
      return 'failed';
    case 'upgrading':
      return 'upgrading: a newer render of its own is in flight';
    case 'suspended':
      return 'suspended or held';
  }
}
