/**
 * The relay's side of spec.dependsOn: a reverse index (dependency → dependents) kept from the
 * watched Releases' specs (domain/dependencies/dependents-index.ts), and, when what a dependent
 * judges of a dependency changes — its verdict, its Applied or Healthy condition, a newer render in
 * flight, its generation, its add or delete — a reconcile message to each dependent, through the
 * sender, which coalesces them as any other. A waiting Release is thus woken by its dependency's
 * change; nothing polls it but its 5-minute safety recheck (docs/dependencies.md).
 *
 * The first list of a term only fills the index: every Release is sent by its own first list, or
 * waits for its timers when up to date. relay/relay.ts composes this; reset() ends a term.
 */
import type { Release } from '../domain/api/objects.ts';
import type { ReleaseSet } from '../domain/api/release-set.ts';
import {
  createDependentsIndex,
  MAX_DEPENDENTS_PER_CHANGE,
  releaseFingerprint,
  releaseSetFingerprint,
  type DependentsIndex,
} from '../domain/dependencies/dependents-index.ts';
import type { DependencyKind } from '../domain/api/depends-on.ts';
import type { Logger } from '../platform/logger.ts';
import type { Watched } from './watch/informers.ts';
import type { InformerEvent } from './watch/resilient-informer.ts';

/** What the relay keeps of a ReleaseSet (watch/slim.ts), as the fingerprint reads it. */
type KeptSet = Pick<ReleaseSet, 'metadata' | 'status'>;

/** Sends a dependent Release a reconcile message with `cause`. */
export type SendDependent = (release: Release, cause: string) => void;

/** The Release the relay indexes as `namespace/name`, if any. */
export type IndexedRelease = (namespace: string, name: string) => Release | undefined;

export interface DependentsWiring {
  /** A Release event, with the Release as indexed before and after it. */
  onRelease(old: Release | undefined, next: Release | undefined, initial: boolean, send: SendDependent): void;
  /** A ReleaseSet event (watched only with a fleet queue): the object as the informer keeps it (watch/slim.ts). */
  onReleaseSet(event: InformerEvent<Watched>, send: SendDependent): void;
  /** How many Releases have dependencies (a gauge's worth). */
  dependents(): number;
  reset(): void;
}

export function createDependentsWiring(log: Logger, indexed: IndexedRelease): DependentsWiring {
  let index: DependentsIndex = createDependentsIndex();
  const wake = (kind: DependencyKind, namespace: string, name: string, what: string, send: SendDependent) => {
    const dependents = index.dependentsOf(kind, namespace, name);
    if (dependents.length > MAX_DEPENDENTS_PER_CHANGE)
      log.warn(
        'a dependency has more dependents than one change wakes; the rest wait for their safety recheck',
        {
          kind,
          namespace,
          name,
          dependents: dependents.length,
          woken: MAX_DEPENDENTS_PER_CHANGE,
        },
      );
    for (const dependent of dependents.slice(0, MAX_DEPENDENTS_PER_CHANGE)) {
      const slash = dependent.indexOf('/');
      const release = indexed(dependent.slice(0, slash), dependent.slice(slash + 1));
      if (release !== undefined) send(release, `dependency ${kind} ${namespace}/${name} ${what}`);
    }
  };
  return {
    onRelease(old, next, initial, send) {
      const meta = (next ?? old)?.metadata;
      if (meta === undefined) return;
      const namespace = meta.namespace ?? '';
      index.setRelease(namespace, meta.name, next);
      if (initial) return;
      const before = releaseFingerprint(old);
      const after = releaseFingerprint(next);
      if (before === after) return;
      const what = next === undefined ? 'deleted' : old === undefined ? 'added' : 'changed';
      wake('Release', namespace, meta.name, what, send);
    },
    onReleaseSet(event, send) {
      const old = event.type === 'added' ? undefined : (event.old as KeptSet | undefined);
      const next = event.type === 'deleted' ? undefined : (event.object as KeptSet);
      const meta = (next ?? old)?.metadata;
      if (meta === undefined || event.initial) return;
      if (releaseSetFingerprint(old) === releaseSetFingerprint(next)) return;
      const what = next === undefined ? 'deleted' : old === undefined ? 'added' : 'changed';
      wake('ReleaseSet', meta.namespace ?? '', meta.name, what, send);
    },
    dependents: () => index.size(),
    reset() {
      index = createDependentsIndex();
    },
  };
}
