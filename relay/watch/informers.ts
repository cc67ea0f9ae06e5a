/**
 * The relay's informers for one leadership term: Releases, the convoy kinds a Release depends
 * on (Cluster, Mutation, Lifecycle, GitRepository), labelled ConfigMaps and Secrets as
 * metadata only, and ReleaseSets when the relay has a fleet queue. Each lists by pages (LIST_PAGE_SIZE) and watches over convoy's own transport
 * (list-watch.ts), and keeps only what the relay reads of each object (slim.ts).
 *
 * A Release is slimmed, parsed and made compact (compact.ts) once, as it comes off the wire: the
 * informer's map and the relay's index then hold the same parsed object, not one copy each.
 * One that does not parse is kept slim and reported by `releaseParseError`.
 */
import { parseRelease } from '../../domain/api/objects.ts';
import { WATCH_LABEL_SELECTOR, type DependencyKind } from '../../domain/relay/affected-releases.ts';
import {
  convoyPath,
  releasePath,
  releaseSetPath,
  type ConvoyPlural,
} from '../../adapters/kube/convoy-paths.ts';
import type { KubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RelayMetrics } from '../metrics.ts';
import { pagedList } from './list-watch.ts';
import { metadataOnlyListWatch } from './metadata-only.ts';
import type { KubeObjectLike, ListFunction, ListWatchLike } from './list-watch.ts';
import { createResilientInformer, type InformerEvent, type ResilientInformer } from './resilient-informer.ts';
import { compactRelease, stringPool } from './compact.ts';
import { once, slimCluster, slimDependency, slimRelease, slimReleaseSet } from './slim.ts';

/** A watched object as the relay reads it (a parsed Release, or a slim object). */
export type Watched = KubeObjectLike & { spec?: unknown };

/**
 * Objects per list page. A list of 10,000 Releases in one answer is tens of MB of JSON and more
 * as objects, all alive at once; by pages, each page is slimmed (slim.ts) before the next is
 * read, as client-go's informers page at 500.
 */
export const LIST_PAGE_SIZE = 500;

const CUSTOM_DEPENDENCIES: readonly {
  kind: DependencyKind;
  plural: ConvoyPlural;
  slim: (object: Watched) => Watched;
}[] = [
  { kind: 'Cluster', plural: 'clusters', slim: slimCluster },
  { kind: 'Mutation', plural: 'mutations', slim: slimDependency },
  { kind: 'Lifecycle', plural: 'lifecycles', slim: slimDependency },
  { kind: 'GitRepository', plural: 'gitrepositories', slim: slimDependency },
];

const METADATA_DEPENDENCIES = [
  ['ConfigMap', '/api/v1/configmaps'],
  ['Secret', '/api/v1/secrets'],
] as const;

export interface TermInformers {
  readonly releases: ResilientInformer<Watched>;
  readonly dependencies: ReadonlyMap<DependencyKind, ResilientInformer<Watched>>;
  /** ReleaseSets (slim), made only with `onReleaseSet`. */
  readonly releaseSets: ResilientInformer<Watched> | undefined;
  /** Why a Release the informer holds does not parse; undefined for a parsed one. */
  releaseParseError(object: Watched): string | undefined;
}

export interface TermInformerOptions {
  readonly kube: KubeClientConfig;
  readonly logger: Logger;
  readonly metrics: RelayMetrics;
  readonly onRelease: (event: InformerEvent<Watched>) => void;
  readonly onDependency: (kind: DependencyKind, event: InformerEvent<Watched>) => void;
  /** Watch ReleaseSets and report their events here; left out, they are not watched. */
  readonly onReleaseSet?: ((event: InformerEvent<Watched>) => void) | undefined;
  /** Objects per list page of the convoy kinds; default LIST_PAGE_SIZE. */
  readonly listPageSize?: number | undefined;
  /** Watch labelled Secrets (metadata only); default true. */
  readonly watchSecrets?: boolean | undefined;
  readonly relistIntervalMs?: number | undefined;
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number } | undefined;
}

/** Makes (does not start) one term's informers. */
export function termInformers(options: TermInformerOptions): TermInformers {
  const { kube, metrics } = options;
  const pageSize = options.listPageSize ?? LIST_PAGE_SIZE;
  const parseErrors = new WeakMap<object, string>();

  const informer = (
    name: string,
    path: string,
    list: ListFunction<Watched>,
    transform: (object: Watched) => Watched,
    onEvent: (event: InformerEvent<Watched>) => void,
    extra: {
      labelSelector?: string;
      createListWatch?: (
        list: ListFunction<Watched>,
        transform: (object: Watched) => Watched,
      ) => ListWatchLike<Watched>;
    } = {},
  ) =>
    createResilientInformer<Watched>({
      name,
      path,
      list,
      transform,
      kube,
      onEvent,
      ...extra,
      hooks: {
        onConnect: () => metrics.informerConnects.inc({ informer: name }),
        onError: () => metrics.informerErrors.inc({ informer: name }),
        onRestart: () => metrics.informerRestarts.inc({ informer: name }),
        onRelist: () => metrics.informerRelists.inc({ informer: name }),
      },
      logger: options.logger,
      ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
      ...(options.relistIntervalMs === undefined ? {} : { relistIntervalMs: options.relistIntervalMs }),
    });

  // One pool per term's Release informer: the strings many Releases hold alike (compact.ts).
  const strings = stringPool();
  const releaseTransform = once<Watched>((raw) => {
    const slim = slimRelease(raw);
    const parsed = parseRelease(slim);
    if (parsed.ok) return compactRelease(parsed.value, strings);
    parseErrors.set(slim, parsed.error);
    return slim;
  });
  const releasesPath = releasePath();
  const releases = informer(
    'Release',
    releasesPath,
    pagedList(kube, releasesPath, releaseTransform, { pageSize }),
    releaseTransform,
    options.onRelease,
  );

  const dependencies = new Map<DependencyKind, ResilientInformer<Watched>>();
  for (const { kind, plural, slim: transform } of CUSTOM_DEPENDENCIES) {
    const slim = once<Watched>(transform);
    const path = convoyPath(plural);
    dependencies.set(
      kind,
      informer(kind, path, pagedList(kube, path, slim, { pageSize }), slim, (event) =>
        options.onDependency(kind, event),
      ),
    );
  }
  // ConfigMaps and Secrets as metadata only: the relay maps them to Releases by name and
  // never needs (or holds) their data.
  for (const [kind, path] of METADATA_DEPENDENCIES.filter(
    ([kind]) => kind !== 'Secret' || options.watchSecrets !== false,
  )) {
    const metadata = metadataOnlyListWatch<Watched>(kube, path, WATCH_LABEL_SELECTOR);
    dependencies.set(
      kind,
      informer(
        kind,
        path,
        metadata.list,
        once<Watched>(slimDependency),
        (event) => options.onDependency(kind, event),
        {
          labelSelector: WATCH_LABEL_SELECTOR,
          createListWatch: metadata.createListWatch,
        },
      ),
    );
  }
  let releaseSets: ResilientInformer<Watched> | undefined;
  if (options.onReleaseSet !== undefined) {
    const slim = once<Watched>(slimReleaseSet);
    const path = releaseSetPath();
    releaseSets = informer(
      'ReleaseSet',
      path,
      pagedList(kube, path, slim, { pageSize }),
      slim,
      options.onReleaseSet,
    );
  }
  return { releases, dependencies, releaseSets, releaseParseError: (object) => parseErrors.get(object) };
}
