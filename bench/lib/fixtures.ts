// Render fixtures: what the benchmark's Git repositories hold.
import type { FixtureFiles } from '../../test/harness/git-fixtures.ts';

export interface RenderMix {
  configMaps: number;
  secrets: number;
  services: number;
  deployments: number;
}

/** 200 objects, like a typical application render: mostly config, some Services, a few workloads. */
export const MIX_200: RenderMix = { configMaps: 120, secrets: 40, services: 36, deployments: 4 };

export function objectCount(mix: RenderMix): number {
  return mix.configMaps + mix.secrets + mix.services + mix.deployments;
}

const pad = (n: number): string => String(n).padStart(3, '0');
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** Multi-document YAML files under `dir`, one file per kind. Objects carry no namespace (the Release's is used). */
export function renderFiles(dir: string, mix: RenderMix): FixtureFiles {
  const docs = (count: number, make: (i: number) => string): string =>
    Array.from({ length: count }, (_, i) => make(i)).join('---\n');
  return {
    [`${dir}/configmaps.yaml`]: docs(
      mix.configMaps,
      (i) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: config-${pad(i)}
  labels: {app.kubernetes.io/name: bench, tier: config}
data:
  LOG_LEVEL: info
  FEATURE_FLAGS: "a,b,c"
  settings.json: '{"index": ${i}, "replicas": 3, "timeoutSeconds": 30}'
`,
    ),
    [`${dir}/secrets.yaml`]: docs(
      mix.secrets,
      (i) => `apiVersion: v1
kind: Secret
metadata:
  name: secret-${pad(i)}
  labels: {app.kubernetes.io/name: bench}
type: Opaque
data:
  username: ${b64(`user-${i}`)}
  password: ${b64(`not-a-real-password-${i}`)}
`,
    ),
    [`${dir}/services.yaml`]: docs(
      mix.services,
      (i) => `apiVersion: v1
kind: Service
metadata:
  name: svc-${pad(i)}
  labels: {app.kubernetes.io/name: bench}
spec:
  selector: {app: web-${pad(i % Math.max(1, mix.deployments))}}
  ports:
    - {name: http, port: 80, targetPort: 8080, protocol: TCP}
`,
    ),
    [`${dir}/deployments.yaml`]: docs(
      mix.deployments,
      (i) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-${pad(i)}
  labels: {app.kubernetes.io/name: bench}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web-${pad(i)}}
  template:
    metadata:
      labels: {app: web-${pad(i)}}
    spec:
      containers:
        - name: web
          image: ghcr.io/example/web:1.${i}.0
          ports: [{containerPort: 8080}]
          envFrom: [{configMapRef: {name: config-${pad(i)}}}]
          resources:
            requests: {cpu: 50m, memory: 64Mi}
`,
    ),
  };
}

/** One small render per Release: `<dir>/<name>/cm.yaml` with two ConfigMaps named after the Release. */
export function smallRenderFiles(dir: string, names: readonly string[]): FixtureFiles {
  const files: FixtureFiles = {};
  for (const name of names) {
    files[`${dir}/${name}/cm.yaml`] = `apiVersion: v1
kind: ConfigMap
metadata: {name: ${name}-a}
data: {release: ${name}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ${name}-b}
data: {release: ${name}, extra: "yes"}
`;
  }
  return files;
}
