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
 */
import { combinedVerdict } from '../domain/status/verdict.ts';
import { releaseKey, type VerbInput } from './args.ts';
import { readRelease } from './kube.ts';
import type { ExitCode } from './output.ts';
import type { Session } from './session.ts';
import { verdictLine } from './verdict-line.ts';
import { waitVerbFor } from './wait-loop.ts';

/** The one line of a suspended Release: why the wait ends, and how to resume it (convoy or kubectl). */
const suspendedLine = ({ namespace, name }: { namespace: string; name: string }): string =>
  `${namespace}/${name} is suspended (spec.suspend: true): convoy applies nothing until it is resumed, so waiting would never end; ` +
  `resume it with \`convoy resume ${name} -n ${namespace}\` ` +
  `(or kubectl patch releases.convoy.dev ${name} -n ${namespace} --type merge -p '{"spec":{"suspend":false}}') and wait again`;

export function waitVerb(input: VerbInput, s: Session): Promise<ExitCode> {
  return waitVerbFor(input, s, (positionals, namespaceFlag) => {
    const key = releaseKey('wait', positionals, namespaceFlag);
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
  });
}
