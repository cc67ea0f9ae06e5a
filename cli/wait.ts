/**
 * `convoy wait <release> [--timeout 5m]`: polls the combined verdict until it
 * is Ready (exit 0) or a failure convoy does not retry (exit 1 at once). A
 * retried stop (SourceNotReady, ClusterNotReady, …) is a wait: it may recover.
 * A suspended Release (spec.suspend: true) changes only when someone resumes
 * it, so waiting for it would only ever end at the timeout: exit 4 at once with
 * one line saying so and how to resume (as `flux reconcile` refuses a suspended
 * object instead of waiting). At the timeout: exit 1 and the last verdict. A
 * change of verdict is printed as it happens; an API server that cannot be
 * reached for a moment is waited through, a refusal (403) or a missing Release
 * is not. The polling is cli/wait-loop.ts, shared with `wait rset/<name>`.
 * Several Releases (`wait a b ns/c`, or `-l <selector>` [-A], listed once when the wait starts, as
 * kubectl wait does): exit 0 when every one is Ready; the first failure, or the first suspended one,
 * ends the wait naming it.
 */
import { combinedVerdict } from '../domain/status/verdict.ts';
import type { Release } from '../domain/api/objects.ts';
import { releasePath } from '../adapters/kube/convoy-paths.ts';
import type { ReleaseKey } from '../views/cluster.ts';
import { namespaceOf, releaseKey, type VerbInput } from './args.ts';
import { readRelease } from './kube.ts';
import { CliFailure, UsageError, type ExitCode } from './output.ts';
import type { Session } from './session.ts';
import { verdictLine } from './verdict-line.ts';
import { waitVerbFor, type WaitTarget } from './wait-loop.ts';

/** The one line of a suspended Release: why the wait ends, and how to resume it (convoy or kubectl). */
const suspendedLine = ({ namespace, name }: { namespace: string; name: string }): string =>
  `${namespace}/${name} is suspended (spec.suspend: true): convoy applies nothing until it is resumed, so waiting would never end; ` +
  `resume it with \`convoy resume ${name} -n ${namespace}\` ` +
  `(or kubectl patch releases.convoy.dev ${name} -n ${namespace} --type merge -p '{"spec":{"suspend":false}}') and wait again`;

/** The wait of one Release. */
export function releaseTarget(key: ReleaseKey): WaitTarget {
  return {
    what: `${key.namespace}/${key.name}`,
    async read(cluster) {
      const verdict = combinedVerdict(await readRelease(cluster, key));
      const line = verdictLine(verdict);
      if (verdict.ready) return { state: 'ready', line };
      if (verdict.kind === 'failure') return { state: 'failure', line };
      if (verdict.kind === 'suspended') return { state: 'held', line: suspendedLine(key) };
      return { state: 'waiting', line };
    },
  };
}

export function waitVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  return waitVerbFor(input, s, (positionals, values) => {
    const selector = values.selector;
    const all = values['all-namespaces'] === true;
    if (selector === undefined) {
      if (all) throw new UsageError('wait: -A waits for the Releases -l selects in every namespace; give -l');
      // Each operand a Release (`<name>` or `<namespace>/<name>`); releaseKey names the form when none is given.
      const keys = (positionals.length === 0 ? [undefined] : positionals).map((p) =>
        releaseKey('wait', p === undefined ? [] : [p], values),
      );
      return () => Promise.resolve(keys.map(releaseTarget));
    }
    if (positionals.length > 0)
      throw new UsageError(
        `wait: -l selects the Releases to wait for; do not also name one ("${positionals[0]}")`,
      );
    const namespace = all ? undefined : namespaceOf(values).effective;
    return async (cluster) => {
      const list = await cluster.client.list<Release>(releasePath(namespace), { labelSelector: selector });
      if (list.items.length === 0)
        throw new CliFailure(
          `no Releases match -l ${selector}${namespace === undefined ? '' : ` in namespace ${namespace}`}`,
        );
      return list.items.map((r) =>
        releaseTarget({ namespace: r.metadata.namespace ?? namespace ?? 'default', name: r.metadata.name }),
      );
    };
  });
}
