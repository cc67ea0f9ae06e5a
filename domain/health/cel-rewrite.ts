/**
 * Rewrites a parsed (not yet type-checked) cel-js AST so that the built-ins
 * that run on JavaScript regular expressions never run:
 * - `s.matches(re)` → the RE2 method registered by cel-runtime.ts;
 * - `duration(s)` → the linear Go-style parser of cel-duration.ts;
 * - `s.lastIndexOf(t)` → the linear search of cel-strings.ts (V8's is O(n·m)).
 * cel-js refuses a second overload with the same signature, so the calls are
 * renamed before the type check resolves them (the check binds by name).
 *
 * Also collects the literal patterns, so an invalid RE2 pattern is a compile
 * error naming the check rather than an evaluation error on every object.
 */

/** The method `s.matches(re)` is renamed to; registered by cel-runtime.ts. */
export const RE2_MATCHES_METHOD = 'convoy_re2_matches';
/** The function `duration(s)` is renamed to; registered by cel-runtime.ts. */
export const GO_DURATION_FUNCTION = 'convoy_go_duration';
/** The method `s.lastIndexOf(…)` is renamed to (V8's is O(n·m)); registered by cel-runtime.ts. */
export const LINEAR_LAST_INDEX_OF_METHOD = 'convoy_last_index_of';

interface NodeLike {
  readonly op: string;
  args: unknown;
  readonly meta: Record<string, unknown>;
}

function isNode(value: unknown): value is NodeLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { op?: unknown }).op === 'string' &&
    'args' in value &&
    typeof (value as { evaluate?: unknown }).evaluate === 'function'
  );
}

function literalString(node: unknown): string | undefined {
  return isNode(node) && node.op === 'value' && typeof node.args === 'string' ? node.args : undefined;
}

/** Every AST node reachable from `root`: operands, macro expansions and macro operands. */
function* nodesOf(root: NodeLike): Generator<NodeLike> {
  const seen = new Set<unknown>();
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    if (Array.isArray(value)) {
      pending.push(...(value as unknown[]));
      continue;
    }
    if (isNode(value)) {
      yield value;
      pending.push(value.args, value.meta['alternate'], value.meta['macro']);
      continue;
    }
    // A comprehension's operands ({iterable, init, step, …}) or a macro ({receiver, arg, val, exp, …}).
    for (const inner of Object.values(value)) {
      if (isNode(inner) || Array.isArray(inner)) pending.push(inner);
    }
  }
}

export interface Rewrite {
  /** String literals used as patterns, in source order of discovery. */
  literalPatterns: string[];
}

/** Renames the regex and duration built-ins in place. Call on a fresh parse, before its type check. */
export function rewriteBuiltins(root: unknown): Rewrite {
  const literalPatterns: string[] = [];
  if (!isNode(root)) return { literalPatterns };
  for (const node of nodesOf(root)) {
    const args = node.args;
    if (!Array.isArray(args)) continue;
    if (node.op === 'rcall' && args[0] === 'matches' && Array.isArray(args[2]) && args[2].length === 1) {
      args[0] = RE2_MATCHES_METHOD;
      const pattern = literalString(args[2][0]);
      if (pattern !== undefined) literalPatterns.push(pattern);
    } else if (
      node.op === 'call' &&
      args[0] === 'matches' &&
      Array.isArray(args[1]) &&
      args[1].length === 2
    ) {
      const pattern = literalString(args[1][1]);
      if (pattern !== undefined) literalPatterns.push(pattern);
    } else if (
      node.op === 'call' &&
      args[0] === 'duration' &&
      Array.isArray(args[1]) &&
      args[1].length === 1
    ) {
      args[0] = GO_DURATION_FUNCTION;
    } else if (
      node.op === 'rcall' &&
      args[0] === 'lastIndexOf' &&
      Array.isArray(args[2]) &&
      args[2].length <= 2
    ) {
      args[0] = LINEAR_LAST_INDEX_OF_METHOD;
    }
  }
  return { literalPatterns };
}

/** Error messages speak of what the author wrote, not the internal names. */
export function publicNames(message: string): string {
  return message
    .replaceAll(RE2_MATCHES_METHOD, 'matches')
    .replaceAll(GO_DURATION_FUNCTION, 'duration')
    .replaceAll(LINEAR_LAST_INDEX_OF_METHOD, 'lastIndexOf');
}
