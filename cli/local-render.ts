/**
 * Renders a Release on the user's machine, as the reconcile would (source,
 * cluster, Helm values, render, mutations: domain/reconcile/prepare-render.ts
 * with the real adapters), with the user's kubeconfig: what they may not
 * read (a values Secret, a Cluster's kubeconfig) fails with their 403. A pin
 * is ignored (the point is the source); `ref` replaces spec.source.git.ref.
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

export async function renderLocally(
  cluster: Cluster,
  release: Release,
  ref: GitRef | undefined,
): Promise<LocalRender> {
  const source = release.spec.source as { git?: { ref: GitRef } };
  if (ref !== undefined && source.git === undefined)
    throw new UsageError('--ref applies to a Git source; this Release has none');
  const annotations = { ...release.metadata.annotations };
  delete annotations[Annotation.pin];
  const spec =
    ref === undefined
      ? release.spec
      : { ...release.spec, source: { ...release.spec.source, git: { ...source.git!, ref } } };
  const asRendered: Release = { ...release, metadata: { ...release.metadata, annotations }, spec } as Release;
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
