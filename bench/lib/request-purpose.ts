// Groups the client-side request keys (lib/client-requests.ts describeRequest) by what a
// loop needed them for, so a Release's requests break down by what each one was for.
export const PURPOSES = [
  'lease',
  'release',
  'config',
  'dryRun',
  'read',
  'apply',
  'status',
  'events',
] as const;
export type Purpose = (typeof PURPOSES)[number];

/**
 * lease: coordination Leases; release: reading the Release; config: Cluster, Mutations,
 * GitRepository, Secrets/ConfigMaps of values, discovery and /version; dryRun: server-side
 * apply dry runs; read: GETs of rendered objects; apply: object writes (apply, delete);
 * status: status applies; events: Kubernetes Events about the Release.
 */
export function purposeOf(key: string): Purpose {
  const [verb = '', resource = ''] = key.split(' ');
  if (resource === 'leases') return 'lease';
  if (resource === 'events') return 'events';
  if (resource === 'releases/status') return 'status';
  if (resource === 'releases') return 'release';
  if (key.includes('(dry run)')) return 'dryRun';
  if (['clusters', 'mutations', 'gitrepositories', 'lifecycles', 'discovery', '/version'].includes(resource))
    return 'config';
  if (verb === 'GET' || verb === 'LIST') return 'read';
  return 'apply';
}

export function byPurpose(
  byRequest: Record<string, number>,
  per = 1,
): Record<Purpose, number> & { total: number } {
  const out = Object.fromEntries(PURPOSES.map((p) => [p, 0])) as Record<Purpose, number>;
  let total = 0;
  for (const [key, n] of Object.entries(byRequest)) {
    out[purposeOf(key)] += n;
    total += n;
  }
  const round = (n: number): number => Math.round((n / per) * 100) / 100;
  return {
    ...(Object.fromEntries(PURPOSES.map((p) => [p, round(out[p])])) as Record<Purpose, number>),
    total: round(total),
  };
}
