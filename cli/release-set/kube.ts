/**
 * ReleaseSets through the user's own kubeconfig (their RBAC decides, as for Releases): read,
 * list, merge-patch, and the set's child Releases (label convoy.dev/release-set).
 */
import { releasePath, releaseSetPath } from '../../adapters/kube/convoy-paths.ts';
import { isKubeApiError } from '../../adapters/kube/http.ts';
import type { Release } from '../../domain/api/objects.ts';
import type { ReleaseSet } from '../../domain/api/release-set.ts';
import { FleetLabel } from '../../domain/fleet/labels.ts';
import type { Cluster, ReleaseKey } from '../../views/cluster.ts';
import { CliFailure } from '../output.ts';

export type RawSet = Record<string, unknown> & {
  metadata?: { namespace?: string; name?: string; managedFields?: unknown };
};

const notFound = (key: ReleaseKey) =>
  new CliFailure(
    `ReleaseSet ${key.namespace}/${key.name} not found (convoy get rset -n ${key.namespace} lists them)`,
  );

export async function readSetRaw(cluster: Cluster, key: ReleaseKey): Promise<RawSet> {
  try {
    return await cluster.client.get<RawSet>(releaseSetPath(key.namespace, key.name));
  } catch (error) {
    if (isKubeApiError(error, 404)) throw notFound(key);
    throw error;
  }
}

export async function parseSetOrFail(raw: unknown, key: ReleaseKey): Promise<ReleaseSet> {
  const { parseReleaseSet } = await import('../../domain/api/release-set.ts');
  const parsed = parseReleaseSet(raw);
  if (!parsed.ok)
    throw new CliFailure(`ReleaseSet ${key.namespace}/${key.name} does not parse: ${parsed.error}`);
  return parsed.value;
}

export async function readSet(cluster: Cluster, key: ReleaseKey): Promise<ReleaseSet> {
  return parseSetOrFail(await readSetRaw(cluster, key), key);
}

/** A JSON merge patch on the set (an annotation, spec.rollout.paused) with the user's identity. */
export async function patchSet(
  cluster: Cluster,
  key: ReleaseKey,
  patch: Record<string, unknown>,
): Promise<void> {
  try {
    await cluster.client.patch(releaseSetPath(key.namespace, key.name), patch, { type: 'merge' });
  } catch (error) {
    if (isKubeApiError(error, 404)) throw notFound(key);
    throw error;
  }
}

/** The set's children (label convoy.dev/release-set=<name>), parsed; one that does not parse is skipped and counted. */
export async function setChildren(
  cluster: Cluster,
  key: ReleaseKey,
): Promise<{ children: Release[]; unparsed: string[] }> {
  const { parseRelease } = await import('../../domain/api/objects.ts');
  const { items } = await cluster.client.list<Record<string, unknown>>(releasePath(key.namespace), {
    labelSelector: `${FleetLabel.releaseSet}=${key.name}`,
  });
  const children: Release[] = [];
  const unparsed: string[] = [];
  for (const raw of items) {
    const parsed = parseRelease(raw);
    if (parsed.ok) children.push(parsed.value);
    else unparsed.push(String((raw.metadata as { name?: string } | undefined)?.name ?? '?'));
  }
  children.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  return { children, unparsed };
}
