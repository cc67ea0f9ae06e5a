// `convoy deps <release>`: the Release's spec.dependsOn as a tree, each dependency with what the
// Release judges of it and its own verdict (domain/dependencies/tree.ts), read with the user's
// own rights: a dependency the user may not read is shown with the refusal.
import { parseRelease } from '../domain/api/objects.ts';
import { parseReleaseSet } from '../domain/api/release-set.ts';
import { describeClass } from '../domain/dependencies/evaluate.ts';
import { memoReads, type DependencyReads } from '../domain/dependencies/reads.ts';
import { dependencyTree, type DependencyNode } from '../domain/dependencies/tree.ts';
import { combinedVerdict } from '../domain/status/verdict.ts';
import { releasePath, releaseSetPath } from '../adapters/kube/convoy-paths.ts';
import { isKubeApiError } from '../adapters/kube/http.ts';
import type { Cluster } from '../views/cluster.ts';
import { releaseKey, verbArgs, type VerbInput } from './args.ts';
import { readRelease } from './kube.ts';
import { ExitCode } from './output.ts';
import type { Session } from './session.ts';
import { verdictLine } from './verdict-line.ts';

export async function depsVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  const { values, positionals } = verbArgs(input);
  const key = releaseKey('deps', positionals, values);
  const cluster = await s.cluster(values);
  const release = await readRelease(cluster, key);
  s.io.out(`${key.namespace}/${key.name}  ${verdictLine(combinedVerdict(release))}`);
  const tree = await dependencyTree(release, memoReads(userReads(cluster)), verdictLine);
  if (tree.length === 0) s.io.out('  (no spec.dependsOn)');
  for (const line of printTree(tree, '  ')) s.io.out(line);
  return ExitCode.ok;
}

/** The tree as lines: `├─ Release ns/name (Ready): ready — <its verdict>`. */
export function printTree(nodes: readonly DependencyNode[], indent: string): string[] {
  return nodes.flatMap((node, i) => {
    const last = i === nodes.length - 1;
    const judged =
      node.judged === 'missing'
        ? 'not found'
        : node.judged === 'unreadable'
          ? 'not readable'
          : describeClass(node.judged);
    const mark =
      node.mark === undefined ? '' : ` [${node.mark === 'depth' ? 'deeper than shown' : node.mark}]`;
    const { kind, name, condition } = node.dependency;
    const head = `${indent}${last ? '└─' : '├─'} ${kind} ${node.namespace}/${name} (${condition}): ${judged}${mark} — ${node.verdict}`;
    return [head, ...printTree(node.children, `${indent}${last ? '   ' : '│  '}`)];
  });
}

/** What `deps` reads, with the user's rights: a 404 is "not found", any other refusal an error shown on its node. */
function userReads(cluster: Cluster): DependencyReads {
  const get = async (path: string) => {
    try {
      return await cluster.client.get(path);
    } catch (error) {
      if (isKubeApiError(error, 404)) return undefined;
      throw error;
    }
  };
  return {
    async release(namespace, name) {
      const raw = await get(releasePath(namespace, name));
      if (raw === undefined) return undefined;
      const parsed = parseRelease(raw);
      if (!parsed.ok) throw new Error(`Release ${namespace}/${name} does not parse: ${parsed.error}`);
      return parsed.value;
    },
    async releaseSet(namespace, name) {
      const raw = await get(releaseSetPath(namespace, name));
      if (raw === undefined) return undefined;
      const parsed = parseReleaseSet(raw);
      if (!parsed.ok) throw new Error(`ReleaseSet ${namespace}/${name} does not parse: ${parsed.error}`);
      return parsed.value;
    },
    // What the user sees is what their RBAC lets them read; the namespace rule is the functions'.
    namespaceLabels: () => Promise.resolve({}),
  };
}
