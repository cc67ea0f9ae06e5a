/**
 * Command-line parsing shared by the verbs: the kubectl-style global flags
 * (--kubeconfig, --context, -n/--namespace) and the Release a verb is about
 * (`<name> -n <namespace>` or `<namespace>/<name>`). Every mistake is a
 * UsageError (exit 2, one line).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './output.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

export const GLOBAL_OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
} as const satisfies Options;

export interface GlobalFlags {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  namespace?: string | undefined;
}

export interface ReleaseKey {
  namespace: string;
  name: string;
}

/** parseArgs with the global flags added; unknown flags and bad values become UsageErrors. */
export function parseVerbArgs<O extends Options>(verb: string, argv: readonly string[], options: O) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { ...GLOBAL_OPTIONS, ...options },
    });
  } catch (error) {
    const message = (error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)).replace(
      /\. To specify .*$/,
      '',
    );
    throw new UsageError(`${verb}: ${message}`);
  }
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
