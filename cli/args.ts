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
  namespaceFlag: string | undefined,
  extra = 0,
): ReleaseKey {
  const [first] = positionals;
  if (first === undefined)
    throw new UsageError(
      `${verb}: missing the Release: convoy ${verb} <name> [-n <namespace>] or <namespace>/<name>`,
    );
  if (positionals.length > 1 + extra)
    throw new UsageError(`${verb}: unexpected argument "${positionals[1 + extra]}"`);
  const parts = first.split('/');
  const [namespace, name] =
    parts.length === 2 ? [parts[0], parts[1]] : [namespaceFlag ?? 'default', parts[0]];
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
