/**
 * The operator verbs of `convoy` (also `kubectl convoy`, through the
 * `kubectl-convoy` bin): one file per verb in cli/, dispatched here.
 * `runCli` never throws: every error is one line on stderr and an exit code.
 */
import { describeError, ExitCode, UsageError, type Output } from './output.ts';
import { createSession, type Session } from './session.ts';

export type Verb = (argv: readonly string[], session: Session) => Promise<ExitCode>;

/** Each verb's module is imported only when it runs, so `convoy status` does not load the renderer. */
interface VerbEntry {
  readonly usage: string;
  load(): Promise<Verb>;
}

export const VERBS: Readonly<Record<string, VerbEntry>> = {
  get: {
    usage: 'get [<release>] [-A] [-o json]       Releases with their verdict (-A: every namespace)',
    load: async () => (await import('./get.ts')).getVerb,
  },
  describe: {
    usage: 'describe <release>                   conditions, attempts, waves, hooks, events',
    load: async () => (await import('./describe.ts')).describeVerb,
  },
  status: {
    usage: 'status <release> [-o json]          the combined verdict: exit 0 Ready, 1 failed, 3 waiting',
    load: async () => (await import('./status.ts')).statusVerb,
  },
  wait: {
    usage:
      'wait <release> [--timeout 5m] [--interval 1s]   until Ready (0), a failure not retried (1) or the timeout (1)',
    load: async () => (await import('./wait.ts')).waitVerb,
  },
  sync: {
    usage:
      'sync <release> [--force]             request a reconcile now (--force: skip the dry run, re-apply)',
    load: async () => (await import('./annotate.ts')).syncVerb,
  },
  pin: {
    usage: 'pin <release> <renderRef> [--api <url>]   deploy exactly that render (full or short ref)',
    load: async () => (await import('./annotate.ts')).pinVerb,
  },
  unpin: {
    usage: 'unpin <release>                      follow the source again',
    load: async () => (await import('./annotate.ts')).unpinVerb,
  },
  history: {
    usage: 'history <release> [--api <url>]      renders: time, revision, renderRef, applied/healthy/pinned',
    load: async () => (await import('./history.ts')).historyVerb,
  },
  rollback: {
    usage: 'rollback <release> [renderRef]       pin to that render (default: the last healthy one)',
    load: async () => (await import('./rollback.ts')).rollbackVerb,
  },
  suspend: {
    usage: 'suspend <release>                    stop reconciling (the observers keep observing)',
    load: async () => (await import('./annotate.ts')).suspendVerb,
  },
  resume: {
    usage: 'resume <release>                     reconcile again',
    load: async () => (await import('./annotate.ts')).resumeVerb,
  },
  diff: {
    usage: 'diff <release> [--ref <ref>]         live objects vs. a dry run of the render (exit 1: a diff)',
    load: async () => (await import('./diff.ts')).diffVerb,
  },
  tree: {
    usage: 'tree <release>                       objects of the applied render with sync and health',
    load: async () => (await import('./tree.ts')).treeVerb,
  },
  events: {
    usage: 'events <release> [-o json]           the Events convoy wrote about the Release',
    load: async () => (await import('./events.ts')).eventsVerb,
  },
};

export const cliUsage = `Release verbs (your kubeconfig and RBAC; flags: -n <namespace>, --context, --kubeconfig):
${Object.values(VERBS)
  .map((v) => `  ${v.usage}`)
  .join('\n')}`;

export const isCliVerb = (verb: string | undefined): boolean =>
  verb !== undefined && Object.hasOwn(VERBS, verb);

export async function runCli(
  verb: string,
  argv: readonly string[],
  io: Output,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const session = createSession(io, env);
  try {
    const entry = VERBS[verb];
    if (entry === undefined) throw new UsageError(`unknown command "${verb}"`);
    return await (
      await entry.load()
    )(argv, session);
  } catch (error) {
    const { line, code } = describeError(error);
    io.err(line);
    return code;
  } finally {
    session.close();
  }
}
