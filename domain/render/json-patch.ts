/**
 * JSON Patch (RFC 6902, with RFC 6901 pointers) and JSON Merge Patch (RFC 7386) over plain JSON
 * data. Both return new data and never change their inputs.
 *
 * Failures throw `JsonPatchError` naming the operation and the path; messages never quote the
 * values involved (a patch may target a Secret).
 */
import { cloneJson, isPlainObject, jsonEqual, setOwnProperty } from './kube-object.ts';

export class JsonPatchError extends Error {
  /** 0-based index of the failing operation in the patch (-1: the patch itself is malformed). */
  readonly opIndex: number;

  constructor(opIndex: number, message: string) {
    super(message);
    this.name = 'JsonPatchError';
    this.opIndex = opIndex;
  }
}

type Container = Record<string, unknown> | unknown[];

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** RFC 6901: "" is the whole document, otherwise "/"-separated tokens with ~1 = "/" and ~0 = "~". */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/'))
    throw new Error(`"${pointer}" is not a JSON pointer: it must be empty or start with "/"`);
  return pointer
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~(?![01])/.test(token))
        throw new Error(`"${pointer}" is not a JSON pointer: "~" must be followed by 0 or 1`);
      return token.replaceAll('~1', '/').replaceAll('~0', '~');
    });
}

/** An array index token: "0" or digits without a leading zero. */
function arrayIndex(token: string, length: number, allowEnd: boolean): number {
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new Error(`"${token}" is not an array index`);
  const index = Number(token);
  if (index > length || (index === length && !allowEnd)) {
    throw new Error(`index ${index} is out of bounds (the array has ${length} items)`);
  }
  return index;
}

function lookup(doc: unknown, tokens: readonly string[]): { found: boolean; value?: unknown } {
  let current = doc;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) >= current.length) return { found: false };
      current = current[Number(token)];
    } else if (isPlainObject(current)) {
      if (!Object.hasOwn(current, token)) return { found: false };
      current = current[token];
    } else {
      return { found: false };
    }
  }
  return { found: true, value: current };
}

function parentOf(doc: unknown, tokens: readonly string[], pointer: string): Container {
  const parent = lookup(doc, tokens.slice(0, -1));
  if (!parent.found) throw new Error(`the parent of ${pointer} does not exist`);
  if (!Array.isArray(parent.value) && !isPlainObject(parent.value)) {
    throw new Error(`the parent of ${pointer} is not an object or array`);
  }
  return parent.value;
}

function add(doc: unknown, pointer: string, value: unknown): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const parent = parentOf(doc, tokens, pointer);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    if (last === '-') parent.push(value);
    else parent.splice(arrayIndex(last, parent.length, true), 0, value);
  } else {
    setOwnProperty(parent, last, value);
  }
  return doc;
}

function remove(doc: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) throw new Error('cannot remove the whole document');
  const parent = parentOf(doc, tokens, pointer);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    parent.splice(arrayIndex(last, parent.length, false), 1);
  } else {
    if (!Object.hasOwn(parent, last)) throw new Error(`${pointer} does not exist`);
    delete parent[last];
  }
  return doc;
}

function get(doc: unknown, pointer: string): unknown {
  const result = lookup(doc, parsePointer(pointer));
  if (!result.found) throw new Error(`${pointer} does not exist`);
  return result.value;
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function checkOperation(raw: unknown, index: number): Operation {
  if (!isPlainObject(raw)) throw new JsonPatchError(index, `operation ${index + 1} is not an object`);
  const { op, path } = raw;
  if (typeof op !== 'string' || !OPS.has(op)) {
    throw new JsonPatchError(index, `operation ${index + 1}: "op" must be one of ${[...OPS].join(', ')}`);
  }
  if (typeof path !== 'string')
    throw new JsonPatchError(index, `operation ${index + 1} (${op}): "path" must be a string`);
  if ((op === 'move' || op === 'copy') && typeof raw.from !== 'string') {
    throw new JsonPatchError(index, `operation ${index + 1} (${op} ${path}): "from" must be a string`);
  }
  if ((op === 'add' || op === 'replace' || op === 'test') && !Object.hasOwn(raw, 'value')) {
    throw new JsonPatchError(index, `operation ${index + 1} (${op} ${path}): "value" is missing`);
  }
  return raw as unknown as Operation;
}

function applyOperation(doc: unknown, operation: Operation): unknown {
  const { op, path } = operation;
  switch (op) {
    case 'add':
      return add(doc, path, cloneJson(operation.value));
    case 'remove':
      return remove(doc, path);
    case 'replace':
      get(doc, path); // replace needs an existing target
      return parsePointer(path).length === 0
        ? cloneJson(operation.value)
        : add(remove(doc, path), path, cloneJson(operation.value));
    case 'move': {
      const from = operation.from as string;
      if (from === path) {
        get(doc, from);
        return doc;
      }
      if (path.startsWith(`${from}/`)) throw new Error(`cannot move ${from} into its own child ${path}`);
      const value = get(doc, from);
      return add(remove(doc, from), path, value);
    }
    case 'copy':
      return add(doc, path, cloneJson(get(doc, operation.from as string)));
    default: // test
      if (!jsonEqual(get(doc, path), operation.value))
        throw new Error(`the value at "${path}" is not the expected value`);
      return doc;
  }
}

/** Applies a JSON Patch (an array of operations). All or nothing: on failure nothing is returned. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw new JsonPatchError(-1, 'a JSON6902 patch must be a list of operations');
  const operations = patch.map((raw, index) => checkOperation(raw, index));
  let result = cloneJson(doc);
  operations.forEach((operation, index) => {
    try {
      result = applyOperation(result, operation);
    } catch (error) {
      const what = operation.from === undefined ? operation.path : `${operation.from} → ${operation.path}`;
      const why = error instanceof Error ? error.message : String(error);
      throw new JsonPatchError(index, `operation ${index + 1} (${operation.op} ${what}) failed: ${why}`);
    }
  });
  return result;
}

/** RFC 7386: objects merge recursively, null removes a key, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  return mergeInto(cloneJson(target), patch);
}

/** Merges `patch` into `target`, which this function owns and may change. */
function mergeInto(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return cloneJson(patch);
  const result = isPlainObject(target) ? target : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else setOwnProperty(result, key, mergeInto(Object.hasOwn(result, key) ? result[key] : undefined, value));
  }
  return result;
}
