/**
 * The operator verbs of `convoy` (also `kubectl convoy`), declared once: their arguments,
 * flags and one-line summary. cli/main.ts turns this table into the commander program (per-verb
 * --help, flag checking) and cli/completion.ts into the bash/zsh/fish completion scripts. Each
 * verb's module is imported only when it runs, so `convoy --help` loads none of them.
 * Light on purpose: nothing here imports a Kubernetes client, zod or YAML.
 */
import type { VerbInput } from './args.ts';
import type { ExitCode } from './output.ts';
import { isSetTarget } from './release-set/target.ts';
import type { Session } from './session.ts';

export type Verb = (input: VerbInput, session: Session) => Promise<ExitCode>;

export interface FlagSpec {
  /** commander flags, e.g. `-o, --output <format>` or `--force`. */
  readonly flags: string;
  readonly description: string;
  readonly choices?: readonly string[];
  readonly default?: string;
}

export interface VerbSpec {
  readonly name: string;
  readonly summary: string;
  /** commander argument names, all optional (`[release]`): the verb says what is missing, naming the form. */
  readonly args: readonly string[];
  readonly flags: readonly FlagSpec[];
  /** Extra text after the flags in `convoy <verb> --help`. */
  readonly help?: string;
  load(): Promise<Verb>;
}

/** The kubectl flags every Release verb takes. */
export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  {
    flags: '-n, --namespace <namespace>',
    description: "the namespace (default: the kubeconfig context's namespace, else default)",
  },
  { flags: '--context <name>', description: 'the kubeconfig context to use' },
  {
    flags: '--kubeconfig <file>',
    description: 'the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)',
  },
];

const API: FlagSpec = {
  flags: '--api <url>',
  description: 'the convoy HTTP API, for the stored renders (default: $CONVOY_API_URL)',
};
const RELEASE = '[release]';
const RELEASE_FORM = '<release> is <name> (with -n <namespace>) or <namespace>/<name>.';
const SET_FORM =
  'A ReleaseSet is rset/<name> (with -n <namespace>) or rset/<namespace>/<name> (docs/fleet.md).';

/**
 * The verb for a Release, or for a ReleaseSet when the first operand names the kind (`rset/web`,
 * `rset web`): each module is loaded only when it runs.
 */
const routed =
  (release: () => Promise<Verb>, set: () => Promise<Verb>): (() => Promise<Verb>) =>
  () =>
    Promise.resolve<Verb>(async (input, session) =>
      (await (isSetTarget(input.positionals) ? set() : release()))(input, session),
    );

export const VERBS: readonly VerbSpec[] = [
  {
    name: 'get',
    summary:
      'list Releases (or ReleaseSets: get rset) with their verdict, or print them whole (-o json|yaml)',
    args: [RELEASE, '[name]'],
    flags: [
      { flags: '-A, --all-namespaces', description: 'every namespace' },
      {
        flags: '-l, --selector <selector>',
        description: 'only Releases with these labels (e.g. team=a,tier!=canary)',
      },
      {
        flags: '-o, --output <format>',
        description:
          'json|yaml: the objects as the API server returns them; wide: more columns; name: release.convoy.dev/<name>',
        choices: ['json', 'yaml', 'wide', 'name'],
      },
      { flags: '-w, --watch', description: 'after the list, print each change as it happens (Ctrl-C stops)' },
      { flags: '--show-managed-fields', description: 'keep metadata.managedFields in -o json|yaml' },
    ],
    help:
      `${RELEASE_FORM}\nThe kind may be named first, as with kubectl: get releases|release|rel [<name>], get rset [<name>].\n-o json prints one Release object for a named Release and a List otherwise, as kubectl does, keys in kubectl's order;\nthe combined verdict alone is convoy status <release> -o json.\n` +
      `convoy get rset [<name>]: ReleaseSets (NAME, STATE, STEP, UPDATED/SELECTED, READY, FAILED, REVISION, AGE). ${SET_FORM}`,
    load: routed(
      async () => (await import('./get.ts')).getVerb,
      async () => (await import('./release-set/get.ts')).getSetVerb,
    ),
  },
  {
    name: 'describe',
    summary:
      'conditions, attempts, rollout, waves, hooks, health and Events of a Release (or of a ReleaseSet: rset/<name>)',
    args: [RELEASE],
    flags: [],
    help: `describe rset/<name>: revision, rollout, steps, counts, failing Clusters, held and child Releases, Events. ${SET_FORM}`,
    load: routed(
      async () => (await import('./describe.ts')).describeVerb,
      async () => (await import('./release-set/describe.ts')).describeSetVerb,
    ),
  },
  {
    name: 'status',
    summary: 'the combined verdict: exit 0 Ready, 1 failed, 3 waiting',
    args: [RELEASE],
    flags: [
      {
        flags: '-o, --output <format>',
        description: 'the verdict as json or yaml',
        choices: ['json', 'yaml'],
      },
    ],
    help: 'Exit codes: 0 Ready, 1 failed (not retried), 3 not Ready yet (waiting, retrying or suspended).',
    load: async () => (await import('./status.ts')).statusVerb,
  },
  {
    name: 'wait',
    summary:
      'wait until Ready (exit 0), a failure not retried or the timeout (exit 1), or suspended (exit 4)',
    args: ['[release...]'],
    flags: [
      { flags: '--timeout <duration>', description: 'give up after this long', default: '5m' },
      { flags: '--interval <duration>', description: 'how often to read the Release', default: '1s' },
      {
        flags: '-l, --selector <selector>',
        description: 'every Release with these labels (listed when the wait starts)',
      },
      { flags: '-A, --all-namespaces', description: 'with -l: in every namespace' },
    ],
    help:
      'Exit codes: 0 Ready, 1 failed (not retried) or timed out, 4 suspended (spec.suspend: true: it would never\n' +
      'become Ready; the line says how to resume it). A retried stop (SourceNotReady, …) is waited through.\n' +
      'Several Releases (wait a b ns/c, or -l <selector> [-A]): 0 when all are Ready; the first failure or suspended one ends\n' +
      'the wait, named.\n' +
      'wait rset/<name>: 0 the rollout Succeeded for the current generation; 1 Halted, RolledBack, a stop the set does not\n' +
      `retry, or the timeout; 4 Paused or WaitingForApproval (the line names convoy resume / convoy approve) — but an\n` +
      `approval convoy approve wrote and the set has not taken yet is waited through, so approve … && wait … works. ${SET_FORM}`,
    load: routed(
      async () => (await import('./wait.ts')).waitVerb,
      async () => (await import('./release-set/wait.ts')).waitSetVerb,
    ),
  },
  {
    name: 'sync',
    summary: 'request a reconcile now (--wait: and return its verdict)',
    args: [RELEASE],
    flags: [
      { flags: '--force', description: 'skip the dry run and apply the render again' },
      {
        flags: '--wait',
        description: 'wait for the reconcile the request brings, then as convoy wait (exit 0 Ready, 1, 4)',
      },
      { flags: '--timeout <duration>', description: 'with --wait: give up after this long (default 5m)' },
    ],
    load: async () => (await import('./annotate.ts')).syncVerb,
  },
  {
    name: 'pin',
    summary: 'deploy exactly that render (full or short renderRef) until convoy unpin',
    args: [RELEASE, '[renderRef]'],
    flags: [API],
    load: async () => (await import('./annotate.ts')).pinVerb,
  },
  {
    name: 'unpin',
    summary: 'follow the source (Git, Helm repository) again',
    args: [RELEASE],
    flags: [],
    load: async () => (await import('./annotate.ts')).unpinVerb,
  },
  {
    name: 'history',
    summary: 'the renders: time, source revision, renderRef, applied/healthy/pinned',
    args: [RELEASE],
    flags: [API],
    load: async () => (await import('./history.ts')).historyVerb,
  },
  {
    name: 'rollback',
    summary: 'pin the previous render (--to <ref>: another; --last-healthy: the last healthy one)',
    args: [RELEASE, '[renderRef]'],
    flags: [
      {
        flags: '--to <renderRef>',
        description: 'the render to go back to (full or short ref; convoy history lists them)',
      },
      { flags: '--last-healthy', description: 'the last render that was healthy (status.lastHealthy)' },
      API,
    ],
    help:
      'Without --to or --last-healthy: the render applied before the current one (status.rollout.previousRenderRef),\n' +
      'like helm rollback and argocd app rollback. The Release is pinned to it and stops following its source;\n' +
      'convoy unpin <release> follows the source again.\n' +
      'rollback rset/<name>: every Cluster the current revision updated goes back to status.lastSucceededRevision\n' +
      `(annotation convoy.dev/rollback=<status.revision.id>); refused when no older revision succeeded. ${SET_FORM}`,
    load: routed(
      async () => (await import('./rollback.ts')).rollbackVerb,
      async () => (await import('./release-set/actions.ts')).rollbackSetVerb,
    ),
  },
  {
    name: 'suspend',
    summary: 'stop reconciling (the observers keep observing)',
    args: [RELEASE],
    flags: [],
    load: async () => (await import('./annotate.ts')).suspendVerb,
  },
  {
    name: 'resume',
    summary: 'reconcile again (resume rset/<name>: unpause the rollout)',
    args: [RELEASE],
    flags: [],
    help: `resume rset/<name> sets spec.rollout.paused to false. ${SET_FORM}`,
    load: routed(
      async () => (await import('./annotate.ts')).resumeVerb,
      async () => (await import('./release-set/actions.ts')).resumeSetVerb,
    ),
  },
  {
    name: 'pause',
    summary: 'pause the rollout of a ReleaseSet: pause rset/<name> (spec.rollout.paused)',
    args: ['[releaseset]'],
    flags: [],
    help: `Nothing of the set is written or deleted until convoy resume rset/<name>; status keeps being reported. ${SET_FORM}`,
    load: routed(
      async () => (await import('./release-set/actions.ts')).pauseReleaseVerb,
      async () => (await import('./release-set/actions.ts')).pauseSetVerb,
    ),
  },
  {
    name: 'approve',
    summary: 'approve the step of a ReleaseSet that waits: approve rset/<name> [--step <step>]',
    args: ['[releaseset]'],
    flags: [
      { flags: '--step <name>', description: 'the step to approve; refused unless it is the one waiting' },
    ],
    help: `Writes convoy.dev/approve=<step>@<status.revision.id> for the step that waits; refused when none waits. ${SET_FORM}`,
    load: routed(
      async () => (await import('./release-set/actions.ts')).approveReleaseVerb,
      async () => (await import('./release-set/actions.ts')).approveSetVerb,
    ),
  },
  {
    name: 'diff',
    summary: 'live objects vs. a server-side dry run of the render (exit 1: a difference)',
    args: [RELEASE],
    flags: [
      {
        flags: '--ref <ref>',
        description:
          'render the Git source (spec.source.git or the GitRepository of gitRepositoryRef) at branch:<b>, tag:<t> or commit:<sha>',
      },
    ],
    load: async () => (await import('./diff.ts')).diffVerb,
  },
  {
    name: 'tree',
    summary: 'objects of the applied render with their sync and health',
    args: [RELEASE],
    flags: [],
    load: async () => (await import('./tree.ts')).treeVerb,
  },
  {
    name: 'deps',
    summary: 'the spec.dependsOn graph, each dependency with its verdict',
    args: [RELEASE],
    flags: [],
    help: 'Each line: the dependency, what this Release judges of it (ready, not ready yet, failed, upgrading, …), its own verdict.',
    load: async () => (await import('./deps.ts')).depsVerb,
  },
  {
    name: 'events',
    summary: 'the Events convoy wrote about a Release',
    args: [RELEASE],
    flags: [
      {
        flags: '-o, --output <format>',
        description: 'the Events as json or yaml',
        choices: ['json', 'yaml'],
      },
    ],
    help: `events rset/<name>: the Events about a ReleaseSet (its step transitions). ${SET_FORM}`,
    load: routed(
      async () => (await import('./events.ts')).eventsVerb,
      async () => (await import('./release-set/describe.ts')).setEventsVerb,
    ),
  },
];

export const isCliVerb = (verb: string | undefined): boolean => VERBS.some((v) => v.name === verb);
