import type { Attempt, LifecycleHook, Release } from '../api/index.ts';
import type { DependencyReads } from '../dependencies/reads.ts';
import type { KubeObject } from '../render/kube-object.ts';
import type { MutationInput } from '../render/mutations.ts';
import type { ReleaseSlice } from '../status/slices.ts';
import type { ProgressPolicy } from './progress.ts';
import type { RenderLimits } from './render-limits.ts';

export type { MutationInput };

export type ResolvedSource = NonNullable<Attempt['resolvedSource']>;
export type ResolvedCluster = NonNullable<Attempt['resolvedCluster']>;
export type ResolvedMutation = { name: string; generation: number };

/** A checked-out source: a folder on local disk and what it resolved to. */
export interface SourceTree {
  dir: string;
  /** The checkout `dir` is in: renders may read inside it, never outside. Default: `dir`. */
  root?: string | undefined;
  resolved: ResolvedSource;
}

/** The result of a server-side-apply dry run of one object. */
export type DryRunVerdict =
  | { kind: 'unchanged' }
  | { kind: 'changed' }
  /** Not checked ahead: its kind or namespace is created by this same render. */
  | { kind: 'deferred'; why: string }
  /** Not dry-run: already applied by this run, its apply being its check (checked-by-apply.ts). */
  | { kind: 'appliedAhead' };

/** A dry run the cluster refused (admission, validation, unknown field, conflict). */
export class ApplyRejectedError extends Error {
  override name = 'ApplyRejectedError';
  readonly retryable = false;
}

export type PruneResult = 'deleted' | 'absent' | 'skipped';

/** Operations on the target cluster, all under the field manager `convoy`. */
export interface TargetCluster {
  identity: ResolvedCluster;
  /**
   * Dry-runs the objects in order; throws ApplyRejectedError naming the object when one is refused.
   * `checked`, when given, is told how many objects are checked so far as they finish (progress.ts).
   */
  dryRun(
    objects: readonly KubeObject[],
    checked?: (count: number) => Promise<void>,
  ): Promise<DryRunVerdict[]>;
  /** Server-side apply (force, fieldValidation=Strict). */
  apply(object: KubeObject): Promise<void>;
  /** The live object, or undefined when it does not exist (or its kind is not served). */
  read(object: KubeObject): Promise<Record<string, unknown> | undefined>;
  /** Deletes an object convoy applied; 'skipped' when it is not convoy's or is marked prune: disabled. */
  prune(object: KubeObject): Promise<PruneResult>;
  /**
   * The object as this run's own apply or proving dry run answered it, without a request;
   * undefined when the run has no such answer. The first drift and health checks after an
   * apply build on these.
   */
  answered?(object: KubeObject): Promise<Record<string, unknown> | undefined>;
}

export interface RenderInput {
  release: Release;
  tree: SourceTree;
  /** Helm values layers in order (ConfigMap, Secret, GitRepository), inline values not included. */
  valuesLayers: readonly Record<string, unknown>[];
}

export interface StoredRender {
  renderRef: string;
  objects: readonly KubeObject[];
  resolvedSource?: ResolvedSource | undefined;
  resolvedCluster?: ResolvedCluster | undefined;
  resolvedMutations?: readonly ResolvedMutation[] | undefined;
}

/** The render store as the reconcile loop sees it. */
export interface RenderStorePort {
  put(release: Release, render: StoredRender): Promise<void>;
  /** undefined when absent; throws a terminal error (retryable === false) when unreadable. */
  get(release: Release, renderRef: string): Promise<StoredRender | undefined>;
  /** Applies retention, never deleting a protected renderRef. */
  prune(release: Release, protectedRefs: ReadonlySet<string>, policy: RetentionPolicy): Promise<void>;
}

export interface RetentionPolicy {
  maxRenders: number;
  maxAge: string;
}

export interface ReconcilePorts {
  now(): Date;
  source: { resolve(release: Release): Promise<SourceTree> };
  cluster: { resolve(release: Release): Promise<TargetCluster> };
  values: { read(release: Release): Promise<Record<string, unknown>[]> };
  renderer: { render(input: RenderInput): Promise<KubeObject[]> };
  mutations: { forRelease(release: Release): Promise<MutationInput[]> };
  /** The hooks of spec.lifecycleRef; [] without one; throws when the Lifecycle is missing. */
  lifecycle: { hooksOf(release: Release): Promise<LifecycleHook[]> };
  /** The Releases of a namespace (cluster waves compare with them). */
  releases: { inNamespace(namespace: string): Promise<Release[]> };
  /** Reads what spec.dependsOn names (domain/dependencies/reads.ts); undefined: a Release with dependsOn stops. */
  dependencies?: DependencyReads | undefined;
  /** undefined: no render store is configured for this installation. */
  store: RenderStorePort | undefined;
  retentionDefault: RetentionPolicy;
  /** How large a render this installation takes (render-limits.ts); undefined: DEFAULT_RENDER_LIMITS. */
  renderLimits?: RenderLimits | undefined;
  /** Where the progress of a long run goes (progress.ts); undefined: no progress is written. */
  progress?: ProgressPort | undefined;
}

/** The status writer of a run still under way: the convoy-release slice with lastAttempted phase Syncing. */
export interface ProgressPort {
  policy: ProgressPolicy;
  /** Writes the slice; must not throw (a failed progress write is the writer's to report, never the run's end). */
  write(slice: ReleaseSlice): Promise<void>;
}
