/**
 * GET /v1/releases: every Release the caller may list, across namespaces,
 * as compact summaries (the dashboard's list and its live refresh).
 *
 * Who sees what (docs/decisions.md "Dashboard: all namespaces"): when a
 * SubjectAccessReview allows `list` on releases.convoy.dev in every
 * namespace, the caller sees them all (`scope: "cluster"`). Otherwise the
 * caller sees the namespaces, among those that hold Releases, where a
 * review allows `list` there (`scope: "namespaces"`); nothing tells them
 * that other namespaces exist. The Releases themselves are read with the
 * relay's own cluster-wide list, shared by every caller (createSummaryCache), so N
 * open dashboards cost at most one list per second, not N.
 */
import { parseRelease } from '../../domain/api/objects.ts';
import { Annotation } from '../../domain/reconcile/annotations.ts';
import { mapBounded } from '../../domain/runtime/bounded.ts';
import { combinedVerdict, type Verdict } from '../../domain/status/verdict.ts';
import { mayOnReleases } from './api-common.ts';
import type { Authenticator, Identity } from './auth.ts';
import type { ReleaseApi } from './release-api.ts';

export interface ConditionSummary {
  status: string;
  reason: string;
}

export interface ReleaseSummary {
  namespace: string;
  name: string;
  generation?: number;
  createdAt?: string;
  verdict: Verdict;
  conditions: Record<string, ConditionSummary>;
  rollout?: string;
  suspended: boolean;
  pinned?: string;
  applied?: string;
}

export interface ReleaseListing {
  scope: 'cluster' | 'namespaces';
  /** The namespaces shown, sorted. */
  namespaces: string[];
  /** Sorted by namespace, then name. */
  items: ReleaseSummary[];
}

interface RawMeta {
  metadata?: {
    namespace?: string;
    name?: string;
    generation?: number;
    creationTimestamp?: string;
    annotations?: Record<string, string>;
  };
}

/** One Release as the list shows it; a Release that does not parse is shown as a failure naming why. */
export function summarize(raw: Record<string, unknown>): ReleaseSummary {
  const meta = (raw as RawMeta).metadata ?? {};
  const base = {
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    ...(meta.generation !== undefined ? { generation: meta.generation } : {}),
    ...(meta.creationTimestamp !== undefined ? { createdAt: meta.creationTimestamp } : {}),
  };
  const parsed = parseRelease(raw);
  if (!parsed.ok) {
    return {
      ...base,
      verdict: {
        ready: false,
        signal: 'Applied',
        kind: 'failure',
        message: `the Release does not match the convoy API this relay knows: ${parsed.error}`,
      },
      conditions: {},
      suspended: false,
    };
  }
  const release = parsed.value;
  const conditions: Record<string, ConditionSummary> = {};
  for (const c of release.status?.conditions ?? [])
    conditions[c.type] = { status: c.status, reason: c.reason };
  const pinned = release.metadata.annotations?.[Annotation.pin];
  const applied = release.status?.lastSuccessful?.renderRef;
  const rollout = release.status?.rollout?.state;
  return {
    ...base,
    verdict: combinedVerdict(release),
    conditions,
    ...(rollout !== undefined ? { rollout } : {}),
    suspended: release.spec.suspend === true,
    ...(pinned !== undefined ? { pinned } : {}),
    ...(applied !== undefined ? { applied } : {}),
  };
}

const byKey = (a: ReleaseSummary, b: ReleaseSummary) =>
  a.namespace < b.namespace
    ? -1
    : a.namespace > b.namespace
      ? 1
      : a.name < b.name
        ? -1
        : a.name > b.name
          ? 1
          : 0;

/**
 * The relay's cluster-wide list as summaries, shared by every caller. An answer younger than
 * `ttlMs` is served as is; an older one is served too while ONE list call refreshes it in the
 * background (stale-while-revalidate), so a caller waits for the API server only when the
 * answer is older than `maxStaleMs` (or there is none yet). A failed refresh is not kept.
 */
export function createSummaryCache(
  releases: ReleaseApi,
  {
    ttlMs = 1000,
    maxStaleMs = 10_000,
    now = Date.now,
  }: { ttlMs?: number; maxStaleMs?: number; now?: () => number } = {},
): () => Promise<ReleaseSummary[]> {
  const state: { value?: { at: number; items: ReleaseSummary[] }; refreshing?: Promise<ReleaseSummary[]> } =
    {};
  const refresh = (): Promise<ReleaseSummary[]> => {
    if (state.refreshing !== undefined) return state.refreshing;
    const started = now();
    const refreshing = releases
      .listAll()
      .then((raws) => {
        const items = raws.map(summarize).sort(byKey);
        state.value = { at: started, items };
        return items;
      })
      .finally(() => {
        state.refreshing = undefined;
      });
    state.refreshing = refreshing;
    return refreshing;
  };
  return async () => {
    const value = state.value;
    const age = value === undefined ? Infinity : now() - value.at;
    if (value !== undefined && age < ttlMs) return value.items;
    if (value !== undefined && age < maxStaleMs) {
      // The caller gets the last answer now; the next one gets the refreshed list. A failed
      // refresh is retried by the next caller, and reaches the callers once the answer is too old.
      refresh().catch(() => undefined);
      return value.items;
    }
    return refresh();
  };
}

/** What `id` may see; `namespace` narrows it to one (still only when `list` is allowed there). */
export async function visibleReleases(
  auth: Authenticator,
  summaries: () => Promise<ReleaseSummary[]>,
  id: Identity,
  namespace?: string,
): Promise<ReleaseListing> {
  const all = await summaries();
  const inNamespaces = (allowed: readonly string[]): ReleaseListing => {
    const set = new Set(allowed);
    return {
      scope: 'namespaces',
      namespaces: [...allowed].sort(),
      items: all.filter((s) => set.has(s.namespace)),
    };
  };
  if (namespace !== undefined)
    return inNamespaces((await mayOnReleases(auth, id, 'list', namespace)) ? [namespace] : []);
  if (await mayOnReleases(auth, id, 'list', '')) {
    return { scope: 'cluster', namespaces: [...new Set(all.map((s) => s.namespace))], items: all };
  }
  const candidates = [...new Set(all.map((s) => s.namespace))];
  const allowed = await mapBounded(candidates, 8, (ns) => mayOnReleases(auth, id, 'list', ns));
  return inNamespaces(candidates.filter((_, i) => allowed[i]));
}
