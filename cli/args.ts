/**
 * What the verbs share about their command line: the kubectl-style global flags
 * (--kubeconfig, --context, -n/--namespace; parsed by cli/main.ts) and the Release a verb is
 * about (`<name> -n <namespace>` or `<namespace>/<name>`). Every mistake is a UsageError (exit 2,
 * one line).
 */
import type { ReleaseKey } from '../views/cluster.ts';
import { UsageError } from './output.ts';

/** What the parser hands a verb: its flags by long name (`all-namespaces`, `output`) and its operands. */
export interface VerbInput {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

export interface GlobalFlags {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  namespace?: string | undefined;
  /**
   * Not a flag: the namespace of the kubeconfig context (cli/context-namespace.ts), filled in by
   * cli/main.ts when -n is not given, as kubectl does: -n, else the context's namespace, else default.
   */
  defaultNamespace?: string | undefined;
}

/** -n and the context's namespace, or -n alone (a string) as older callers pass it. */
export type NamespaceChoice = string | undefined | Pick<GlobalFlags, 'namespace' | 'defaultNamespace'>;

/** The -n flag and the namespace a name without one goes to (-n, the context's, default). */
export function namespaceOf(choice: NamespaceChoice): { flag: string | undefined; effective: string } {
  if (typeof choice === 'object')
    return { flag: choice.namespace, effective: choice.namespace ?? choice.defaultNamespace ?? 'default' };
  return { flag: choice, effective: choice ?? 'default' };
}

/**
 * A verb's flags and operands as the parser (cli/main.ts) checked them against the verb's
 * declaration in cli/verbs.ts: `V` names the flags that verb declares.
 */
export function verbArgs<V extends object = object>(
  input: VerbInput,
): { values: GlobalFlags & Partial<V>; positionals: readonly string[] } {
  return { values: input.values as GlobalFlags & Partial<V>, positionals: input.positionals };
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The one Release a verb acts on, from its first positional. */
export function releaseKey(
  verb: string,
  positionals: readonly string[],
  namespaceChoice: NamespaceChoice,
  extra = 0,
): ReleaseKey {
  const { flag: namespaceFlag, effective } = namespaceOf(namespaceChoice);
  const [first] = positionals;
  if (first === undefined)
    throw new UsageError(
      `${verb}: missing the Release: convoy ${verb} <name> [-n <namespace>] or <namespace>/<name>`,
    );
  if (positionals.length > 1 + extra)
    throw new UsageError(`${verb}: unexpected argument "${positionals[1 + extra]}"`);
  const parts = first.split('/');
  const [namespace, name] = parts.length === 2 ? [parts[0], parts[1]] : [effective, parts[0]];
  if (parts.length > 2 || !namespace || !name || !NAME.test(name) || !NAME.test(namespace)) {
    throw new UsageError(
      `${verb}: "${first}" is not a Release name (<name> or <namespace>/<name>, lowercase)`,
    );
  }
  if (parts.length === 2 && namespaceFlag !== undefined && namespaceFlag !== namespace) {
    throw new UsageError(`${verb}: "${first}" names namespace ${namespace} but -n says ${namespaceFlag}`);
  }
  return { namespace, name };
}
