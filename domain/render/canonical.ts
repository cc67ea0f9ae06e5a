/**
 * Canonical JSON and the content address of a render.
 *
 * `canonicalJson` sorts object keys (by UTF-16 code units, as RFC 8785 does; never by locale) and
 * writes no whitespace, so equal data always gives equal text. `renderRef` hashes the canonical
 * JSON of the objects sorted by identity, so neither the order in which a tool printed the
 * objects nor the key order inside them changes the address.
 */
import { createHash } from 'node:crypto';
import { apiGroup, isPlainObject } from './kube-object.ts';
import type { KubeObject } from './kube-object.ts';

/** Orders strings by UTF-16 code unit, never by locale: the same order on every machine. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function writeCanonical(value: unknown, out: string[]): void {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') {
    out.push(JSON.stringify(value));
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${value} is not a JSON number`);
    out.push(JSON.stringify(value));
  } else if (Array.isArray(value)) {
    out.push('[');
    value.forEach((item, i) => {
      if (i > 0) out.push(',');
      // As JSON.stringify does, a missing array element is null.
      writeCanonical(item === undefined ? null : item, out);
    });
    out.push(']');
  } else if (isPlainObject(value)) {
    out.push('{');
    let first = true;
    for (const key of Object.keys(value).sort(compareStrings)) {
      const item = value[key];
      if (item === undefined) continue;
      if (!first) out.push(',');
      first = false;
      out.push(JSON.stringify(key), ':');
      writeCanonical(item, out);
    }
    out.push('}');
  } else {
    throw new TypeError(`canonicalJson: a ${typeof value} is not JSON data`);
  }
}

/** JSON with keys sorted recursively and no whitespace. Throws TypeError for non-JSON data. */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  writeCanonical(value, out);
  return out.join('');
}

/** `group/kind/namespace/name` of an object as it stands (no namespace defaulting). */
function sortKey(obj: KubeObject): string {
  return `${apiGroup(obj.apiVersion)}/${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

function identityOrder(objects: readonly KubeObject[]): { obj: KubeObject; json: string }[] {
  return objects
    .map((obj) => ({ obj, key: sortKey(obj), json: canonicalJson(obj) }))
    .sort((a, b) => compareStrings(a.key, b.key) || compareStrings(a.json, b.json));
}

/**
 * The objects in identity order (group, kind, namespace, name), the order the render store keeps.
 * Ties (which `assertNoDuplicates` prevents) fall back to the canonical JSON, so the order is
 * total.
 */
export function sortObjectsByIdentity(objects: readonly KubeObject[]): KubeObject[] {
  return identityOrder(objects).map((entry) => entry.obj);
}

export interface CanonicalRender {
  /** The objects in identity order. */
  objects: KubeObject[];
  /** The canonical JSON of that list: what the store keeps and what `renderRef` hashes. */
  json: string;
  /** `sha256:<hex>` of `json`. */
  renderRef: string;
}

export function canonicalRender(objects: readonly KubeObject[]): CanonicalRender {
  const ordered = identityOrder(objects);
  const json = `[${ordered.map((entry) => entry.json).join(',')}]`;
  return { objects: ordered.map((entry) => entry.obj), json, renderRef: `sha256:${sha256Hex(json)}` };
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** `sha256:<hex>` of the canonical JSON of the objects sorted by identity. */
export function renderRef(objects: readonly KubeObject[]): string {
  return canonicalRender(objects).renderRef;
}
