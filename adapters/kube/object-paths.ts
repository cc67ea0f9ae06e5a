// Shared by the target-cluster and observer adapters: where an object lives in
// the REST API and how apply errors look (bounded concurrency: domain/runtime/bounded.ts).
import { cloneJson, isPlainObject, type KubeObject } from '../../domain/render/kube-object.ts';
import { apiVersionPath, type ServedResource } from './discovery.ts';

export interface Located {
  path: string;
  /** A copy of the object as sent: a cluster-scoped kind never carries a namespace. */
  body: KubeObject;
}

/** The object's REST path; undefined for a namespaced kind without a namespace. */
export function locateObject(obj: KubeObject, resource: ServedResource): Located | undefined {
  const body = cloneJson(obj);
  const name = encodeURIComponent(obj.metadata.name);
  if (!resource.namespaced) {
    delete body.metadata.namespace;
    return { path: `${apiVersionPath(obj.apiVersion)}/${resource.name}/${name}`, body };
  }
  const ns = obj.metadata.namespace;
  if (ns === undefined || ns === '') return undefined;
  return {
    path: `${apiVersionPath(obj.apiVersion)}/namespaces/${encodeURIComponent(ns)}/${resource.name}/${name}`,
    body,
  };
}

/**
 * Server-side apply reports an object that does not fit the schema (an unknown field under
 * fieldValidation=Strict, a wrong type, duplicate list keys) as HTTP 500 with this message
 * (kubernetes/kubernetes#122480, #139253); retrying cannot fix it.
 */
export function isSchemaError(response: { status: number; body: unknown }): boolean {
  const body = response.body;
  return (
    response.status === 500 &&
    isPlainObject(body) &&
    typeof body.message === 'string' &&
    /^failed to create typed (patch|live) object/.test(body.message)
  );
}
