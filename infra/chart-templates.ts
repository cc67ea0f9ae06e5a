/**
 * relayManifests() turned into Helm templates: the objects are generated with sentinels where a
 * user's value goes (queues, region, image, replicas, settings), and the YAML text then has each
 * sentinel replaced by its Helm expression; the ConfigMap, the PodDisruptionBudget and the tenant
 * RoleBindings get templates of their own. chart-files.ts assembles the chart from them.
 */
import { SYSTEM_NAMESPACES, relayManifests, type KubeManifest } from './relay-manifests.ts';
import { CONFIG_CHECKSUM_ANNOTATION } from './chart-values.ts';
import { withDefaults, yamlOf } from './install-defaults.ts';

/** Sentinels passed to relayManifests() and replaced by Helm expressions in the YAML text. */
export const S = {
  namespace: '__CONVOY_NAMESPACE__',
  reconcile: '__CONVOY_Q_RECONCILE__',
  drift: '__CONVOY_Q_DRIFT__',
  health: '__CONVOY_Q_HEALTH__',
  fleet: '__CONVOY_Q_FLEET__',
  notify: '__CONVOY_Q_NOTIFY__',
  region: '__CONVOY_REGION__',
  bucket: '__CONVOY_BUCKET__',
  image: '__CONVOY_IMAGE__',
  replicas: '__CONVOY_REPLICAS__',
  logLevel: '__CONVOY_LOG_LEVEL__',
  resources: '__CONVOY_RESOURCES__',
  annotations: '__CONVOY_SA_ANNOTATIONS__',
  /** A valid namespace name (relayManifests() checks tenant namespaces) standing for each of .Values.tenantNamespaces. */
  tenant: 'convoy-chart-tenant-namespace',
} as const;

/** Sentinels of the Deployment's optional fields: `key: <WITH>name` becomes `{{- with .Values.name }} key: <toYaml> {{- end }}`. */
const WITH = '__CONVOY_WITH__';
const WITH_STRING = '__CONVOY_WITH_STRING__';
const POD_LABELS = '__CONVOY_POD_LABELS__';
const POD_ANNOTATIONS = '__CONVOY_POD_ANNOTATIONS__';

/** ConfigMap entries with a first-class value; every other entry is `settings.<NAME>` in values.yaml. */
const CONFIG_VALUES: Record<string, string> = {
  CONVOY_NAMESPACE: '{{ .Release.Namespace | quote }}',
  CONVOY_RECONCILE_QUEUE_URL:
    '{{ required "queues.reconcile: the URL of the reconcile SQS queue is required" .Values.queues.reconcile | quote }}',
  CONVOY_DRIFT_QUEUE_URL:
    '{{ required "queues.drift: the URL of the drift SQS queue is required" .Values.queues.drift | quote }}',
  CONVOY_HEALTH_QUEUE_URL:
    '{{ required "queues.health: the URL of the health SQS queue is required" .Values.queues.health | quote }}',
  // Optional: empty, the relay does not watch ReleaseSets.
  CONVOY_FLEET_QUEUE_URL: '{{ .Values.queues.fleet | default "" | quote }}',
  // Optional: empty, the relay does not watch Notifications.
  CONVOY_NOTIFY_QUEUE_URL: '{{ .Values.queues.notify | default "" | quote }}',
  AWS_REGION: '{{ required "aws.region is required" .Values.aws.region | quote }}',
  CONVOY_LOG_LEVEL: '{{ .Values.logLevel | quote }}',
  CONVOY_WATCH_SECRETS: '{{ .Values.watchSecrets | toString | quote }}',
  CONVOY_TENANT_NAMESPACES: '{{ join "," .Values.tenantNamespaces | quote }}',
  CONVOY_IN_CLUSTER_NAMESPACES:
    '{{ if hasKey .Values.settings "CONVOY_IN_CLUSTER_NAMESPACES" }}{{ index .Values.settings "CONVOY_IN_CLUSTER_NAMESPACES" | quote }}{{ else }}{{ join "," .Values.tenantNamespaces | quote }}{{ end }}',
};

/** Entries tied to the manifests themselves (the container port): not settings. */
const FIXED_SETTINGS: readonly string[] = ['CONVOY_HTTP_HOST', 'CONVOY_HTTP_PORT'];

export function chartManifests(): { manifests: KubeManifest[]; defaults: Record<string, string> } {
  const manifests = relayManifests({
    namespace: S.namespace,
    queueUrls: { reconcile: S.reconcile, drift: S.drift, health: S.health, fleet: S.fleet, notify: S.notify },
    region: S.region,
    renderBucket: S.bucket,
    image: S.image,
    replicas: S.replicas as unknown as number,
    logLevel: S.logLevel as unknown as 'info',
    crds: [],
    watchSecrets: true,
    tenancy: { tenantNamespaces: [S.tenant] },
  }).filter((m) => m.kind !== 'Namespace');
  const defaults = Object.fromEntries(
    Object.entries(
      (relayManifests(withDefaults({ crds: [] })).find((m) => m.kind === 'ConfigMap')?.['data'] ??
        {}) as Record<string, string>,
    ),
  );
  for (const m of manifests) {
    if (m.kind === 'ServiceAccount') m.metadata['annotations'] = S.annotations;
    if (m.kind === 'Deployment') {
      const template = (
        m as unknown as {
          spec: {
            template: {
              metadata: Record<string, unknown>;
              spec: Record<string, unknown> & { containers: Record<string, unknown>[] };
            };
          };
        }
      ).spec.template;
      for (const c of template.spec.containers) {
        c['resources'] = S.resources;
        c['imagePullPolicy'] = '__CONVOY_PULL_POLICY__';
      }
      // Pod metadata: the settings checksum and podAnnotations; podLabels after the chart's labels.
      template.metadata['labels'] = {
        ...(template.metadata['labels'] as Record<string, string>),
        [POD_LABELS]: '',
      };
      template.metadata['annotations'] = POD_ANNOTATIONS;
      // The scheduling knobs, each rendered only when set; topologySpreadConstraints' default is relayManifests()'s.
      const { containers, volumes, ...rest } = template.spec;
      delete rest['topologySpreadConstraints'];
      template.spec = {
        ...rest,
        imagePullSecrets: `${WITH}imagePullSecrets`,
        priorityClassName: `${WITH_STRING}priorityClassName`,
        nodeSelector: `${WITH}nodeSelector`,
        tolerations: `${WITH}tolerations`,
        affinity: `${WITH}affinity`,
        topologySpreadConstraints: `${WITH}topologySpreadConstraints`,
        containers,
        volumes,
      };
    }
  }
  return { manifests, defaults };
}

/** The settings that are not first-class values: name → default (the value relayManifests() sets). */
export function settingDefaults(defaults: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(defaults)) {
    if (name in CONFIG_VALUES || name === 'CONVOY_RENDER_BUCKET' || FIXED_SETTINGS.includes(name)) continue;
    out[name] = value;
  }
  return out;
}

/** Settings whose default depends on the installation namespace: values.yaml leaves them out, the template fills them in. */
export function namespaceDependent(data: Record<string, string>): Set<string> {
  return new Set(
    Object.entries(data)
      .filter(([, value]) => value.includes(S.namespace))
      .map(([name]) => name),
  );
}

export function configMapTemplate(manifest: KubeManifest, defaults: Record<string, string>): string {
  const data = (manifest['data'] ?? {}) as Record<string, string>;
  const fromNamespace = namespaceDependent(data);
  const lines = [
    'apiVersion: v1',
    'kind: ConfigMap',
    yamlOf({ metadata: manifest.metadata }).trimEnd(),
    'data:',
  ];
  for (const name of Object.keys(data)) {
    if (name === 'CONVOY_RENDER_BUCKET') {
      lines.push(
        '  {{- with .Values.renderBucket }}',
        `  CONVOY_RENDER_BUCKET: {{ . | quote }}`,
        '  {{- end }}',
      );
    } else if (FIXED_SETTINGS.includes(name)) {
      lines.push(`  ${name}: ${JSON.stringify(defaults[name] ?? '')}`);
    } else if (name in CONFIG_VALUES) {
      lines.push(`  ${name}: ${CONFIG_VALUES[name]}`);
    } else if (fromNamespace.has(name)) {
      const key = JSON.stringify(name);
      lines.push(
        `  ${name}: {{ if hasKey .Values.settings ${key} }}{{ index .Values.settings ${key} | quote }}{{ else }}${JSON.stringify(data[name])}{{ end }}`,
      );
    } else {
      lines.push(`  ${name}: {{ index .Values.settings ${JSON.stringify(name)} | quote }}`);
    }
  }
  // egress.allow, a list, is CONVOY_EGRESS_ALLOW; when set it replaces settings.CONVOY_EGRESS_ALLOW.
  lines.push(
    '  {{- with .Values.egress.allow }}',
    '  CONVOY_EGRESS_ALLOW: {{ join "," . | quote }}',
    '  {{- end }}',
  );
  // Installation settings added in values.yaml that relayManifests() does not set itself.
  lines.push(
    '  {{- range $name, $value := .Values.settings }}',
    `  {{- if not (or (has $name (list ${Object.keys(data)
      .map((k) => JSON.stringify(k))
      .join(' ')})) (and $.Values.egress.allow (eq $name "CONVOY_EGRESS_ALLOW"))) }}`,
    '  {{ $name }}: {{ $value | quote }}',
    '  {{- end }}',
    '  {{- end }}',
  );
  return `${lines.join('\n')}\n`;
}

/** The Secret watch rule of the relay's ClusterRole, present only with .Values.watchSecrets. */
const SECRETS_RULE =
  /^( *)- apiGroups:\n\1 {4}- ""\n\1 {2}resources:\n\1 {4}- secrets\n\1 {2}verbs:\n\1 {4}- list\n\1 {4}- watch\n/m;

/** One RoleBinding per .Values.tenantNamespaces entry, refusing the namespaces convoy never impersonates in. */
export function tenantRoleBindingsTemplate(doc: string): string {
  const refused = SYSTEM_NAMESPACES.map((n) => JSON.stringify(n)).join(' ');
  return [
    '{{- range .Values.tenantNamespaces }}',
    `{{- if has . (list ${refused}) }}{{ fail (printf "tenantNamespaces: %s may not be a tenant namespace: impersonating its ServiceAccounts would make convoy's functions cluster-admin in all but name" .) }}{{ end }}`,
    `{{- if eq . $.Release.Namespace }}{{ fail (printf "tenantNamespaces: %s is convoy's own installation namespace; put Releases that act on the management cluster in a namespace of their own" .) }}{{ end }}`,
    '---',
    doc.replaceAll(`namespace: ${S.tenant}`, 'namespace: {{ . }}').trimEnd(),
    '{{- end }}',
    '',
  ].join('\n');
}

export function helmify(yamlText: string): string {
  return (
    yamlText
      .replace(SECRETS_RULE, (rule) => `{{- if .Values.watchSecrets }}\n${rule}{{- end }}\n`)
      .replaceAll(S.namespace, '{{ .Release.Namespace }}')
      // No default image: convoy-relay:<version> is not on any registry, so an unset one must fail at install, not as ImagePullBackOff.
      .replaceAll(
        S.image,
        `"{{ required "image.repository: the relay image is not published; build it (npm run image, or docker build -f image/Dockerfile) and push it to a registry of yours, then set image.repository (and image.tag) to it" .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"`,
      )
      .replaceAll('__CONVOY_PULL_POLICY__', '{{ .Values.image.pullPolicy }}')
      .replaceAll(S.replicas, '{{ .Values.replicas }}')
      .replace(
        new RegExp(`^( *)(\\S+): ${S.resources}$`, 'm'),
        (_m, indent: string, key: string) =>
          `${indent}${key}: {{- toYaml .Values.resources | nindent ${indent.length + 2} }}`,
      )
      .replace(
        new RegExp(`^( *)(\\S+): ${S.annotations}$`, 'm'),
        (_m, indent: string, key: string) =>
          `${indent}${key}: {{- toYaml .Values.serviceAccount.annotations | nindent ${indent.length + 2} }}`,
      )
      .replace(
        new RegExp(`^( *)${POD_LABELS}: ""$`, 'm'),
        (_m, indent: string) =>
          `${indent}{{- with .Values.podLabels }}\n${indent}{{- toYaml . | nindent ${indent.length} }}\n${indent}{{- end }}`,
      )
      // The checksum of the rendered ConfigMap: a settings change changes the Pod template, so helm upgrade rolls the Pods.
      .replace(new RegExp(`^( *)(\\S+): ${POD_ANNOTATIONS}$`, 'm'), (_m, indent: string, key: string) =>
        [
          `${indent}${key}:`,
          `${indent}  ${CONFIG_CHECKSUM_ANNOTATION}: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}`,
          `${indent}  {{- with .Values.podAnnotations }}`,
          `${indent}  {{- toYaml . | nindent ${indent.length + 2} }}`,
          `${indent}  {{- end }}`,
        ].join('\n'),
      )
      .replace(
        new RegExp(`^( *)(\\S+): ${WITH}(\\w+)$`, 'gm'),
        (_m, indent: string, key: string, value: string) =>
          `${indent}{{- with .Values.${value} }}\n${indent}${key}: {{- toYaml . | nindent ${indent.length + 2} }}\n${indent}{{- end }}`,
      )
      .replace(
        new RegExp(`^( *)(\\S+): ${WITH_STRING}(\\w+)$`, 'gm'),
        (_m, indent: string, key: string, value: string) =>
          `${indent}{{- with .Values.${value} }}\n${indent}${key}: {{ . | quote }}\n${indent}{{- end }}`,
      )
  );
}

/** The PodDisruptionBudget's budget: maxUnavailable, when set, instead of minAvailable (the file is conditional: CONDITIONAL_FILES). */
export function pdbTemplate(doc: string): string {
  const withBudget = doc.replace(/^( *)minAvailable: 1$/m, (_m, indent: string) =>
    [
      `${indent}{{- if hasKey .Values.podDisruptionBudget "maxUnavailable" }}`,
      `${indent}maxUnavailable: {{ .Values.podDisruptionBudget.maxUnavailable }}`,
      `${indent}{{- else }}`,
      `${indent}minAvailable: {{ .Values.podDisruptionBudget.minAvailable }}`,
      `${indent}{{- end }}`,
    ].join('\n'),
  );
  if (withBudget === doc)
    throw new Error(
      'chart: the PodDisruptionBudget of relayManifests() no longer has minAvailable: 1; update pdbTemplate()',
    );
  return withBudget;
}

export function isTenantBinding(m: KubeManifest): boolean {
  return m.kind === 'RoleBinding' && m.metadata['namespace'] === S.tenant;
}
