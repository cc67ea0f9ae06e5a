/**
 * Multi-document YAML and JSON manifests → Kubernetes objects.
 *
 * YAML is read with YAML 1.1 scalars (`yes`/`on` are booleans, `0755` is octal), as Kubernetes'
 * own YAML reader (sigs.k8s.io/yaml) does, so a file means here what it means to `kubectl apply`
 * — except that timestamps and sexagesimal numbers stay strings (the same as in Kubernetes'
 * reader when the target is JSON). Aliases are allowed but their expansion is bounded, so an
 * alias bomb ("billion laughs") fails fast instead of exhausting memory; files are bounded in
 * size before they are parsed.
 *
 * A document (or JSON value) can be one object, a `kind: List` (its `items` are taken), or — in
 * JSON only — an array of objects. Empty documents are skipped.
 */
import { LineCounter, parseAllDocuments } from 'yaml';
import type { Document, ParseOptions, DocumentOptions, SchemaOptions, ToJSOptions } from 'yaml';
import { RenderError } from './errors.ts';
import { isPlainObject, kubeObjectProblem, setOwnProperty } from './kube-object.ts';
import type { KubeObject } from './kube-object.ts';

/** Files larger than this are refused (10 MiB). Rendered chart / kustomize output may pass its own limit. */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;
/** Upper bound on alias expansion per document (see the `yaml` package's `maxAliasCount`). */
export const MAX_YAML_ALIAS_COUNT = 50;

export interface ParseManifestsOptions {
  /** Names the input in error messages: a path relative to the rendered folder, or a command. */
  file: string;
  /** Default: by the extension of `file` (`.json` → JSON, else YAML). */
  format?: 'yaml' | 'json';
  /** Default `MAX_MANIFEST_BYTES`; measured in UTF-8 bytes. */
  maxBytes?: number;
  /**
   * Accept a mapping key given twice (the last one wins), as Helm and kubectl do. Default false:
   * a duplicate key in a hand-written file is almost always a mistake, and is reported.
   */
  allowDuplicateKeys?: boolean;
}

const YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  schema: 'yaml-1.1',
  // Timestamps would become Date objects and `1:30` the number 90: keep both as strings.
  customTags: (tags) =>
    tags.filter((tag) =>
      typeof tag === 'string'
        ? !['timestamp', 'intTime', 'floatTime'].includes(tag)
        : tag.tag !== 'tag:yaml.org,2002:timestamp' && !('format' in tag && tag.format === 'TIME'),
    ),
  logLevel: 'error',
  prettyErrors: true,
};

const TO_JS_OPTIONS: ToJSOptions = { maxAliasCount: MAX_YAML_ALIAS_COUNT };

/** UTF-8 length of `text`, or any number > limit as soon as it is known to exceed it. */
function utf8LengthBeyond(text: string, limit: number): number {
  if (text.length > limit) return text.length;
  if (text.length * 3 <= limit) return text.length * 3;
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= limit; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (mib < 1) return `${bytes} bytes`;
  return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
}

/** The error for a manifest file over the size limit (also raised before reading a file). */
export function fileTooLargeError(file: string, maxBytes: number): RenderError {
  return new RenderError(
    `${file}: the file is larger than ${formatBytes(maxBytes)}; split it into smaller files`,
    {
      file,
    },
  );
}

interface Where {
  file: string;
  docIndex: number;
  line?: number;
  /** Set for the items of a List / JSON array. */
  itemIndex?: number;
  /** Helm's `# Source: chart/templates/x.yaml` comment above the document, if any. */
  source?: string;
}

function describeWhere(where: Where): string {
  let text = `${where.file}: document ${where.docIndex + 1}`;
  if (where.itemIndex !== undefined) text += `, item ${where.itemIndex + 1}`;
  if (where.line !== undefined && where.line > 0) text += ` (line ${where.line})`;
  if (where.source !== undefined) text += ` (${where.source})`;
  return text;
}

function fail(where: Where, problem: string, cause?: unknown): never {
  throw new RenderError(`${describeWhere(where)}: ${problem}`, {
    file: where.file,
    docIndex: where.docIndex,
    ...(where.line !== undefined && where.line > 0 ? { line: where.line } : {}),
    cause,
  });
}

/** A value JSON cannot carry; the message names its path. */
class NotJsonError extends Error {}

/**
 * A fresh tree of plain JSON data: breaks the sharing of aliased nodes, keeps `__proto__` as an
 * ordinary key, and refuses what JSON cannot carry (binary, NaN/Infinity, sets, dates).
 */
function toPlainJson(value: unknown, path: string): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new NotJsonError(`${path || 'the document'} is ${value}, which JSON cannot carry`);
    return value;
  }
  if (Array.isArray(value)) return value.map((item, i) => toPlainJson(item, `${path}[${i}]`));
  const proto: unknown = typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
  if (isPlainObject(value) && (proto === Object.prototype || proto === null)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      setOwnProperty(copy, key, toPlainJson(item, path ? `${path}.${key}` : key));
    }
    return copy;
  }
  const what =
    value instanceof Uint8Array
      ? 'binary data (!!binary)'
      : `a ${Object.prototype.toString.call(value).slice(8, -1)}`;
  throw new NotJsonError(
    `${path || 'the document'} holds ${what}, which a Kubernetes object cannot carry; use a plain string`,
  );
}

/** Adds the objects of one parsed document (an object, a List, or — for JSON — an array). */
function collect(value: unknown, where: Where, allowArray: boolean, into: KubeObject[]): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value) && allowArray) {
    value.forEach((item, itemIndex) => collectOne(item, { ...where, itemIndex }, into));
    return;
  }
  if (isPlainObject(value) && value.kind === 'List' && Array.isArray(value.items)) {
    value.items.forEach((item, itemIndex) => collectOne(item, { ...where, itemIndex }, into));
    return;
  }
  collectOne(value, where, into);
}

function collectOne(value: unknown, where: Where, into: KubeObject[]): void {
  const problem = kubeObjectProblem(value);
  if (problem !== undefined) fail(where, problem);
  try {
    into.push(toPlainJson(value, '') as KubeObject);
  } catch (error) {
    if (error instanceof NotJsonError) fail(where, error.message);
    throw error;
  }
}

/** The first line of a `yaml` error (its pretty form adds a code excerpt after a colon). */
function firstLine(error: Error): string {
  return (error.message.split('\n')[0] ?? '').replace(/:\s*$/, '');
}

function sourceComment(doc: Document.Parsed): string | undefined {
  const comment = doc.commentBefore ?? doc.contents?.commentBefore ?? undefined;
  const match = comment ? /^\s*(Source: \S+)/m.exec(comment) : null;
  return match ? match[1] : undefined;
}

function parseYaml(text: string, options: ParseManifestsOptions, into: KubeObject[]): void {
  const lineCounter = new LineCounter();
  const parsed = parseAllDocuments(text, {
    ...YAML_OPTIONS,
    uniqueKeys: options.allowDuplicateKeys !== true,
    lineCounter,
  });
  // An input of only comments / whitespace is an EmptyStream, not an array.
  const docs = Array.isArray(parsed) ? parsed : [];
  docs.forEach((doc, docIndex) => {
    const start = doc.contents?.range[0] ?? doc.range[0];
    const where: Where = { file: options.file, docIndex, line: lineCounter.linePos(start).line };
    const source = sourceComment(doc);
    if (source !== undefined) where.source = source;
    const error = doc.errors[0];
    if (error !== undefined) {
      const line = error.linePos?.[0].line;
      fail(
        { ...where, ...(line !== undefined ? { line } : {}) },
        `YAML syntax error: ${firstLine(error)}`,
        error,
      );
    }
    if (doc.contents === null) return;
    let value: unknown;
    try {
      value = doc.toJS(TO_JS_OPTIONS);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const why = /alias/i.test(message)
        ? `too many YAML alias expansions (more than ${MAX_YAML_ALIAS_COUNT}); expand the aliases in the file`
        : `cannot be read: ${message}`;
      fail(where, why, error);
    }
    collect(value, where, false, into);
  });
}

function parseJson(text: string, options: ParseManifestsOptions, into: KubeObject[]): void {
  const where: Where = { file: options.file, docIndex: 0 };
  if (text.trim() === '') return;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    fail(where, `JSON syntax error: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  collect(value, where, true, into);
}

/**
 * The Kubernetes objects in `text`, in file order. Throws `RenderError` naming the file, the
 * document (1-based in the message; `docIndex` is 0-based) and the problem: a syntax error, a
 * document that is not a mapping, a missing apiVersion / kind / metadata.name, too many alias
 * expansions, or a file over `maxBytes`.
 */
export function parseManifests(text: string, options: ParseManifestsOptions): KubeObject[] {
  const maxBytes = options.maxBytes ?? MAX_MANIFEST_BYTES;
  const bytes = utf8LengthBeyond(text, maxBytes);
  if (bytes > maxBytes) throw fileTooLargeError(options.file, maxBytes);
  const format = options.format ?? (/\.json$/i.test(options.file) ? 'json' : 'yaml');
  const objects: KubeObject[] = [];
  if (format === 'json') parseJson(text, options, objects);
  else parseYaml(text, options, objects);
  return objects;
}

/**
 * One YAML (or JSON) value that is not a manifest, e.g. a Mutation patch written as a string:
 * the same YAML rules and alias limit as manifests. Throws `Error` with a message for `what`.
 */
export function parseYamlValue(text: string, what: string): unknown {
  const docs = parseAllDocuments(text, { ...YAML_OPTIONS, uniqueKeys: true });
  const list = Array.isArray(docs) ? docs : [];
  if (list.length > 1) throw new Error(`${what} holds ${list.length} YAML documents; give one`);
  const doc = list[0];
  if (doc === undefined) return null;
  const error = doc.errors[0];
  if (error !== undefined) throw new Error(`${what}: YAML syntax error: ${firstLine(error)}`);
  if (doc.contents === null) return null;
  try {
    return toPlainJson(doc.toJS(TO_JS_OPTIONS), '');
  } catch (cause) {
    throw new Error(`${what}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}
