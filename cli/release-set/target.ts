/**
 * Which verbs act on a ReleaseSet: those whose first operand names the kind, as kubectl spells it
 * (`rset web`, `rset/web`, `releaseset/web`, `releasesets.convoy.dev/web`), with -n or
 * `rset/<namespace>/<name>`. Light: the Release verbs use it to route without loading the set code.
 */
import type { ReleaseKey } from '../../views/cluster.ts';
import { namespaceOf, type NamespaceChoice } from '../args.ts';
import { UsageError } from '../output.ts';

const KIND_NAMES = [
  'rset',
  'rsets',
  'releaseset',
  'releasesets',
  'releaseset.convoy.dev',
  'releasesets.convoy.dev',
] as const;

export interface SetOperands {
  /** The name operand (`web`, `ns/web`) when one is given. */
  readonly name: string | undefined;
  /** The operands after it. */
  readonly rest: readonly string[];
}

/** The ReleaseSet operands, or undefined when the first operand does not name the kind (a Release verb). */
export function setOperands(positionals: readonly string[]): SetOperands | undefined {
  const [first, ...rest] = positionals;
  if (first === undefined) return undefined;
  if ((KIND_NAMES as readonly string[]).includes(first)) return { name: rest[0], rest: rest.slice(1) };
  const slash = first.indexOf('/');
  if (slash > 0 && (KIND_NAMES as readonly string[]).includes(first.slice(0, slash)))
    return { name: first.slice(slash + 1), rest };
  return undefined;
}

export const isSetTarget = (positionals: readonly string[]): boolean =>
  setOperands(positionals) !== undefined;

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The one ReleaseSet a verb acts on (`rset/<name>` with -n, or `rset/<namespace>/<name>`). */
export function setKey(
  verb: string,
  positionals: readonly string[],
  namespaceChoice: NamespaceChoice,
): ReleaseKey {
  const { flag: namespaceFlag, effective } = namespaceOf(namespaceChoice);
  const operands = setOperands(positionals);
  const form = `convoy ${verb} rset/<name> [-n <namespace>]`;
  if (operands?.name === undefined || operands.name === '')
    throw new UsageError(`${verb}: missing the ReleaseSet: ${form}`);
  if (operands.rest.length > 0)
    throw new UsageError(`${verb}: unexpected argument "${operands.rest[0]}" (${form})`);
  const parts = operands.name.split('/');
  const [namespace, name] = parts.length === 2 ? [parts[0], parts[1]] : [effective, parts[0]];
  if (parts.length > 2 || !namespace || !name || !NAME.test(name) || !NAME.test(namespace))
    throw new UsageError(
      `${verb}: "${operands.name}" is not a ReleaseSet name (rset/<name> or rset/<namespace>/<name>, lowercase)`,
    );
  if (parts.length === 2 && namespaceFlag !== undefined && namespaceFlag !== namespace)
    throw new UsageError(
      `${verb}: "${operands.name}" names namespace ${namespace} but -n says ${namespaceFlag}`,
    );
  return { namespace, name };
}
