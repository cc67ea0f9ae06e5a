import type { Release } from '../api/index.ts';
import { attempt, halt, isHalt, type Halt } from './halt.ts';
import type { ReconcilePorts, SourceTree } from './ports.ts';
import type { Resolved } from './resolved.ts';
import { errorMessage, isTerminal, isUnverified } from './stops.ts';

/**
 * Step "Fetch the source": the source checked out at what its ref resolves to. Stops at
 * "Fetch the source: error" (sourceFailed, retried), "… not supported" (sourceUnsupported:
 * the error says retrying cannot fix it), or a signature that does not verify (sourceUnverified).
 */
export async function fetchSource(
  release: Release,
  ports: ReconcilePorts,
  resolved: Resolved,
): Promise<SourceTree | Halt> {
  const tree = await attempt(
    () => ports.source.resolve(release),
    (e) =>
      halt(
        isUnverified(e) ? 'sourceUnverified' : isTerminal(e) ? 'sourceUnsupported' : 'sourceFailed',
        errorMessage(e),
        e,
      ),
  );
  if (!isHalt(tree)) resolved.source = tree.resolved;
  return tree;
}
