import type { Release } from '../api/index.ts';
import { attempt, halt, type Halt } from './halt.ts';
import type { ReconcilePorts } from './ports.ts';
import { errorMessage } from './stops.ts';

/**
 * Step "Read Helm values": the values layers of Helm content in order (ConfigMap, Secret,
 * GitRepository path); [] for other content. A layer that cannot be read stops at valuesNotReady (retried).
 */
export async function readHelmValues(
  release: Release,
  ports: ReconcilePorts,
): Promise<Record<string, unknown>[] | Halt> {
  if (release.spec.content.type !== 'Helm') return [];
  return attempt(
    () => ports.values.read(release),
    (e) => halt('valuesNotReady', errorMessage(e), e),
  );
}
