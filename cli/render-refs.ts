/**
 * The renders a Release's status names (lastAttempted, lastSuccessful,
 * lastHealthy, rollout, pin), and turning what a user typed — a full
 * `sha256:…` ref or a short prefix as `convoy history` prints it — into a
 * full renderRef. The ref must match exactly one render the CLI can see: the
 * status's, plus the stored renders when the HTTP API is reachable (`extra`).
 * Anything else is refused here, before the annotation is set (otherwise the
 * reconcile would report Applied False Pinned).
 */
import type { Release } from '../domain/api/objects.ts';
import { UsageError, CliFailure } from './output.ts';
import { revisionOf } from './revision.ts';

const FULL = /^sha256:[0-9a-f]{64}$/;
const SHORT = /^(sha256:)?[0-9a-f]{6,64}$/;

export interface KnownRender {
  renderRef: string;
  roles: string[];
  at?: string | undefined;
  revision?: string | undefined;
}

/** Every render the status names, with what it is (applied, healthy, attempted, previous, pinned). */
export function knownRenders(release: Release): KnownRender[] {
  const s = release.status;
  const found = new Map<string, KnownRender>();
  const add = (ref: string | undefined, role: string, at?: string, revision?: string) => {
    if (ref === undefined) return;
    const entry = found.get(ref) ?? { renderRef: ref, roles: [] };
    entry.roles.push(role);
    entry.at ??= at;
    entry.revision ??= revision;
    found.set(ref, entry);
  };
  const rev = (a: NonNullable<typeof s>['lastAttempted']) => revisionOf(a?.resolvedSource, 40);
  add(s?.lastAttempted?.renderRef, 'attempted', s?.lastAttempted?.attemptedAt, rev(s?.lastAttempted));
  add(s?.lastSuccessful?.renderRef, 'applied', s?.lastSuccessful?.attemptedAt, rev(s?.lastSuccessful));
  add(s?.lastHealthy?.renderRef, 'healthy', s?.lastHealthy?.attemptedAt, rev(s?.lastHealthy));
  add(s?.rollout?.previousRenderRef, 'previous');
  add(s?.pin?.renderRef, 'pinned');
  return [...found.values()];
}

export function resolveRenderRef(
  verb: string,
  release: Release,
  typed: string | undefined,
  extra: readonly string[] = [],
): string {
  if (typed === undefined) throw new UsageError(`${verb}: missing the renderRef (convoy history lists them)`);
  if (!FULL.test(typed) && !SHORT.test(typed))
    throw new UsageError(
      `${verb}: "${typed}" is not a renderRef (sha256:<64 hex digits>, or at least 6 hex digits of one)`,
    );
  const prefix = typed.startsWith('sha256:') ? typed : `sha256:${typed}`;
  const candidates = [...new Set([...knownRenders(release).map((r) => r.renderRef), ...extra])].filter((r) =>
    r.startsWith(prefix),
  );
  if (candidates.length === 1) return candidates[0];
  const name = `${release.metadata.namespace}/${release.metadata.name}`;
  if (candidates.length === 0)
    throw new CliFailure(
      `render ${typed} does not exist for Release ${name} (convoy history ${name} lists its renders)`,
    );
  throw new CliFailure(`render ${typed} is ambiguous for Release ${name}: ${candidates.join(', ')}`);
}
