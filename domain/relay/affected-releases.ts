/**
 * Maps a watch event on another kind to the Releases it concerns, so that a
 * change of a Cluster, Mutation, Lifecycle, GitRepository or values layer
 * reconciles exactly the Releases that read it. All references are local
 * (same namespace), so the caller passes the objects of one namespace.
 */
import { mutationSpecSchema, type Release } from '../api/index.ts';
import { selectorMatches, type LabelSelector } from '../render/label-selector.ts';

export const DEPENDENCY_KINDS = [
  'Cluster',
  'Mutation',
  'Lifecycle',
  'GitRepository',
  'ConfigMap',
  'Secret',
] as const;
export type DependencyKind = (typeof DEPENDENCY_KINDS)[number];

/** The label a ConfigMap or Secret needs for the relay to watch it. */
export const WATCH_LABEL = 'convoy.dev/watch';
export const WATCH_LABEL_SELECTOR = `${WATCH_LABEL}=true`;

/** What the mapping reads of a watched object; raw watch objects fit. */
export interface WatchedObject {
  readonly metadata?:
    | {
        readonly name?: string | undefined;
        readonly namespace?: string | undefined;
        readonly generation?: number | undefined;
        readonly resourceVersion?: string | undefined;
      }
    | undefined;
  readonly spec?: unknown;
  readonly data?: unknown;
  readonly binaryData?: unknown;
}

/** One watch event: old is absent for an add, next for a delete. */
export interface DependencyEvent {
  readonly kind: DependencyKind;
  readonly old: WatchedObject | undefined;
  readonly next: WatchedObject | undefined;
}

/** The objects of the event's namespace. Clusters and GitRepositories let a Secret reach the Releases that read it through them. */
export interface NamespaceObjects {
  readonly releases: readonly Release[];
  readonly clusters?: readonly WatchedObject[];
  readonly gitRepositories?: readonly WatchedObject[];
}

/**
 * Whether the event can change a render: adds and deletes always; updates
 * only when the spec changed (metadata.generation) or, for a ConfigMap or
 * Secret, the data. Status and metadata-only updates never count.
 */
export function dependencyChangeCounts(event: DependencyEvent): boolean {
  const { old, next } = event;
  if (old === undefined || next === undefined) return old !== next;
  if (event.kind === 'ConfigMap' || event.kind === 'Secret') {
    // The relay watches these as metadata only (it never holds their data): then any new
    // resourceVersion counts, since a data change cannot be told from a label change.
    if (
      old.data === undefined &&
      next.data === undefined &&
      old.binaryData === undefined &&
      next.binaryData === undefined
    ) {
      return old.metadata?.resourceVersion !== next.metadata?.resourceVersion;
    }
    return (
      canonical(old.data) !== canonical(next.data) || canonical(old.binaryData) !== canonical(next.binaryData)
    );
  }
  const before = old.metadata?.generation;
  const after = next.metadata?.generation;
  if (before !== undefined && after !== undefined) return before !== after;
  return canonical(old.spec) !== canonical(next.spec);
}

/** The Releases of the namespace that the event concerns (each once, in index order). */
export function affectedReleases(event: DependencyEvent, objects: NamespaceObjects): Release[] {
  const names = new Set<string>();
  for (const object of [event.old, event.next]) {
    const name = object?.metadata?.name;
    if (name !== undefined) names.add(name);
  }
  if (names.size === 0) return [];
  const select = selectorFor(event, names, objects);
  return objects.releases.filter(select);
}

function selectorFor(
  event: DependencyEvent,
  names: ReadonlySet<string>,
  objects: NamespaceObjects,
): (release: Release) => boolean {
  switch (event.kind) {
    case 'Cluster':
      return (release) => names.has(release.spec.cluster.name);
    case 'Lifecycle':
      return (release) =>
        release.spec.lifecycleRef !== undefined && names.has(release.spec.lifecycleRef.name);
    case 'GitRepository':
      return (release) => gitRepositoriesOf(release).some((name) => names.has(name));
    case 'ConfigMap':
      return (release) => valuesLayerNames(release, 'ConfigMap').some((name) => names.has(name));
    case 'Secret':
      return secretReaders(names, objects);
    case 'Mutation': {
      // Old and new selector both: a Release that stops being selected must drop the Mutation's changes.
      const selectors = [event.old, event.next].filter((o) => o !== undefined).map(releaseSelectorOf);
      return (release) =>
        selectors.some(
          (selector) => selector === 'all' || selectorMatches(selector, release.metadata.labels ?? {}),
        );
    }
  }
}

/** Releases that read a Secret: as a values layer, as source credentials, or through their Cluster's kubeconfig or a GitRepository's credentials. */
function secretReaders(names: ReadonlySet<string>, objects: NamespaceObjects): (release: Release) => boolean {
  const clusters = new Set(
    (objects.clusters ?? [])
      .filter((c) => names.has(secretRefName(c.spec, ['kubeConfig', 'secretRef']) ?? ''))
      .map(nameOf),
  );
  const repositories = new Set(
    (objects.gitRepositories ?? [])
      .filter((r) => names.has(secretRefName(r.spec, ['secretRef']) ?? ''))
      .map(nameOf),
  );
  return (release) => {
    const source = release.spec.source;
    const credentials = [
      source.git?.secretRef?.name,
      source.helm?.secretRef?.name,
      source.oci?.secretRef?.name,
    ];
    return (
      credentials.some((name) => name !== undefined && names.has(name)) ||
      valuesLayerNames(release, 'Secret').some((name) => names.has(name)) ||
      clusters.has(release.spec.cluster.name) ||
      gitRepositoriesOf(release).some((name) => repositories.has(name))
    );
  };
}

function gitRepositoriesOf(release: Release): string[] {
  const ref = release.spec.source.gitRepositoryRef?.name;
  return [...(ref === undefined ? [] : [ref]), ...valuesLayerNames(release, 'GitRepository')];
}

function valuesLayerNames(release: Release, kind: 'ConfigMap' | 'Secret' | 'GitRepository'): string[] {
  return (release.spec.content.helm?.valuesFrom ?? [])
    .filter((layer) => layer.kind === kind)
    .map((layer) => layer.name);
}

/** A Mutation's selector; one that does not parse selects everything, since sending too much is safe and too little is not. */
function releaseSelectorOf(mutation: WatchedObject): LabelSelector | 'all' {
  const parsed = mutationSpecSchema.safeParse(mutation.spec);
  return parsed.success ? parsed.data.releaseSelector : 'all';
}

function secretRefName(spec: unknown, path: readonly string[]): string | undefined {
  let at: unknown = spec;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  if (typeof at !== 'object' || at === null) return undefined;
  const name = (at as Record<string, unknown>)['name'];
  return typeof name === 'string' ? name : undefined;
}

function nameOf(object: WatchedObject): string {
  return object.metadata?.name ?? '';
}

/** JSON with sorted keys, so two equal maps compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
