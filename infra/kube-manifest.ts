/**
 * A Kubernetes object as plain JSON; values may hold CDK tokens. Its own file because both the
 * relay's manifests (relay-manifests.ts) and the functions' RBAC (functions-rbac.ts), which
 * relay-manifests.ts includes, build them.
 */
export type KubeManifest = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown>;
};
