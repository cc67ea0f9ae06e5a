/**
 * Renders a Release on the user's machine, as the reconcile would (source,
 * cluster, Helm values, render, mutations: domain/reconcile/prepare-render.ts
 * with the real adapters), with the user's kubeconfig: what they may not
 * read (a values Secret, a Cluster's kubeconfig) fails with their 403. A pin
 * is ignored (the point is the source); `ref` replaces spec.source.git.ref, or renders the
 * GitRepository that spec.source.gitRepositoryRef names at that ref.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GitRef, Release } from '../domain/api/index.ts';
import { Annotation } from '../domain/reconcile/annotations.ts';
import { isHalt } from '../domain/reconcile/halt.ts';
import { prepareRender, type Resolved } from '../domain/reconcile/prepare-render.ts';
import type { KubeObject } from '../domain/render/kube-object.ts';
import { createReconcilePorts } from '../adapters/reconcile/create-ports.ts';
import { USER_MACHINE_EGRESS } from '../domain/egress/policy.ts';
import { DEFAULT_TENANCY } from '../domain/tenancy/settings.ts';
import { convoyPath } from '../adapters/kube/convoy-paths.ts';
import { isKubeApiError } from '../adapters/kube/http.ts';
import type { Cluster } from '../views/cluster.ts';
import { CliFailure, UsageError } from './output.ts';

export interface LocalRender {
  renderRef: string;
  objects: KubeObject[];
  revision: string | undefined;
}

/** `--ref` as the user types it: `branch:x`, `tag:v1`, `commit:abc123`, or a bare branch/commit. */
export function parseRefFlag(value: string): GitRef {
  const [kind, ...rest] = value.split(':');
  const rest1 = rest.join(':');
  if (rest.length > 0 && (kind === 'branch' || kind === 'tag' || kind === 'commit') && rest1 !== '')
    return { [kind]: rest1 };
  if (rest.length > 0)
    throw new UsageError(
      `--ref: "${value}" must be branch:<name>, tag:<name>, commit:<sha> or a branch name`,
    );
  return /^[0-9a-f]{40}$/.test(value) ? { commit: value } : { branch: value };
}

/**
 * The Release's Git source at `ref`: spec.source.git with its ref replaced, or the GitRepository
 * spec.source.gitRepositoryRef names (read with the user's rights) as a Git source at `ref`, its
 * path the Release's. A GitRepository of another namespace with a secretRef is refused: its Secret
 * is in that namespace, which a Git source of the Release cannot name.
 */
async function sourceAtRef(
  cluster: Cluster,
  release: Release,
  ref: GitRef,
): Promise<Release['spec']['source']> {
  const { git, gitRepositoryRef } = release.spec.source;
  if (git !== undefined) return { git: { ...git, ref } };
  if (gitRepositoryRef === undefined)
    throw new UsageError('--ref applies to a Git source (git or gitRepositoryRef); this Release has neither');
  const ns = release.metadata.namespace ?? 'default';
  const repoNs = gitRepositoryRef.namespace ?? ns;
  const name = `GitRepository ${repoNs}/${gitRepositoryRef.name} (spec.source.gitRepositoryRef)`;
  let raw: { spec?: { url?: unknown; secretRef?: { name?: unknown } } };
  try {
    raw = await cluster.client.get(convoyPath('gitrepositories', repoNs, gitRepositoryRef.name));
  } catch (error) {
    if (isKubeApiError(error, 404)) throw new CliFailure(`${name} does not exist`);
    throw error;
  }
  const url = raw.spec?.url;
  if (typeof url !== 'string') throw new CliFailure(`${name} has no spec.url`);
  const secret = raw.spec?.secretRef?.name;
  if (typeof secret === 'string' && repoNs !== ns)
    throw new CliFailure(
      `--ref: ${name} authenticates with Secret ${repoNs}/${secret}, in another namespace than the Release; render it at a ref from a Release in ${repoNs}, or diff without --ref`,
    );
  return {
    git: {
      url,
      ref,
      path: gitRepositoryRef.path,
      ...(typeof secret === 'string' ? { secretRef: { name: secret } } : {}),
    },
  };
}

export async function renderLocally(
  cluster: Cluster,
  release: Release,
  ref: GitRef | undefined,
): Promise<LocalRender> {
  const annotations = { ...release.metadata.annotations };
  delete annotations[Annotation.pin];
  const spec =
    ref === undefined ? release.spec : { ...release.spec, source: await sourceAtRef(cluster, release, ref) };
  const asRendered: Release = { ...release, metadata: { ...release.metadata, annotations }, spec };
  const cacheDir = await mkdtemp(join(tmpdir(), 'convoy-cli-'));
  try {
    // From the user's machine with the user's network: the functions' egress policy guards their
    // network position, which this render does not have.
    const ports = createReconcilePorts({
      managementKubeConfig: cluster.config,
      store: undefined,
      cacheDir,
      tenancy: { ...DEFAULT_TENANCY, egress: USER_MACHINE_EGRESS },
    });
    const resolved: Resolved = {};
    const prepared = await prepareRender(asRendered, ports, resolved, {});
    if (isHalt(prepared))
      throw new CliFailure(
        `cannot render ${release.metadata.namespace}/${release.metadata.name}: ${prepared.message}`,
      );
    return {
      renderRef: prepared.renderRef,
      objects: prepared.objects,
      revision: resolved.source?.git?.commit ?? resolved.source?.helm?.version,
    };
  } finally {
    await rm(cacheDir, { recursive: true, force: true });
  }
}
