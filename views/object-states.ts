// The per-object sync and health of a tree: shared by `convoy tree` (cli/tree.ts) and the dashboard
// (relay/http/release-views.ts). Kept apart from cli/tree.ts so the relay does not load the local renderer.
import type { Release } from '../domain/api/index.ts';
import { assessObject, compileChecks } from '../domain/health/index.ts';
import { comparable, type Compared } from './live-compare.ts';
import { canonicalYaml } from '../domain/render/text-diff.ts';

export interface ObjectState {
  kind: string;
  namespace: string;
  name: string;
  sync: 'Synced' | 'OutOfSync' | 'Missing' | 'Unknown';
  health: string;
  message: string;
}

export function objectStates(
  compared: readonly Compared[],
  release: Release,
  now = new Date(),
): ObjectState[] {
  const checks = compileChecks(release.spec.healthAssessment?.checks ?? []).compiled;
  return compared.map((c) => {
    const sync =
      c.desired === undefined
        ? 'Unknown'
        : c.live === undefined
          ? 'Missing'
          : canonicalYaml(comparable(c.live)) === canonicalYaml(comparable(c.desired))
            ? 'Synced'
            : 'OutOfSync';
    const health = assessObject(c.live, { checks, now });
    return {
      kind: c.object.kind,
      namespace: c.object.metadata.namespace ?? '',
      name: c.object.metadata.name,
      sync,
      health: health.state,
      message: health.message.replace(/\s+/g, ' '),
    };
  });
}
