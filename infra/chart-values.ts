/**
 * The parts of charts/convoy that are the chart's own, not objects of relayManifests(): its values
 * (with a comment per key), values.schema.json (chart-values-schema.ts: unknown keys refused, types
 * checked), the optional ServiceMonitor, NOTES.txt and README.md. infra/install-files.ts writes them next to the templates
 * it derives from relayManifests(); docs/decisions.md "The Helm chart follows Helm's conventions"
 * gives the reasons. Pure: no file system access.
 */
import { Document, isMap, isScalar } from 'yaml';
import { RELAY_CONFIG_NAME, RELAY_NAME } from './relay-manifests.ts';

/** A label the chart's selectors use: podLabels and serviceMonitor.labels may not override it. */
export const SELECTOR_LABEL = 'app.kubernetes.io/name';
export const PART_OF_LABEL = 'app.kubernetes.io/part-of';
/** The pod annotation that rolls the relay when its ConfigMap changes. */
export const CONFIG_CHECKSUM_ANNOTATION = 'checksum/config';

export interface ChartValueInputs {
  /** The relay container's resources in relayManifests(). */
  readonly resources: unknown;
  /** The pod spec's topologySpreadConstraints in relayManifests(). */
  readonly topologySpreadConstraints: unknown;
  /** The installation settings that are not first-class values (name → default). */
  readonly settings: Record<string, string>;
  readonly region: string;
}

/** values.yaml as an object (the defaults helm merges the user's values into). */
export function chartValues(inputs: ChartValueInputs): Record<string, unknown> {
  return {
    image: { repository: '', tag: '', pullPolicy: 'IfNotPresent' },
    imagePullSecrets: [],
    replicas: 2,
    queues: { reconcile: '', drift: '', health: '', fleet: '', notify: '' },
    aws: { region: inputs.region },
    renderBucket: '',
    logLevel: 'info',
    tenantNamespaces: [],
    watchSecrets: false,
    egress: { allow: [] },
    serviceAccount: { annotations: {} },
    resources: inputs.resources,
    podAnnotations: {},
    podLabels: {},
    nodeSelector: {},
    tolerations: [],
    affinity: {},
    priorityClassName: '',
    topologySpreadConstraints: inputs.topologySpreadConstraints,
    podDisruptionBudget: { enabled: true, minAvailable: 1 },
    serviceMonitor: {
      enabled: false,
      labels: {},
      interval: '',
      scrapeTimeout: '',
      relabelings: [],
      metricRelabelings: [],
    },
    settings: inputs.settings,
  };
}

/** The comment above each top-level key of values.yaml. */
const COMMENTS: Record<string, string> = {
  image:
    ' image.repository: the relay image in your registry (required: convoy publishes no image; build it with\n' +
    ' `npm run image` or `docker build -f image/Dockerfile .` and push it, see the chart README).\n' +
    ' image.tag: default the chart appVersion. image.pullPolicy: Always, IfNotPresent or Never.',
  imagePullSecrets:
    ' imagePullSecrets: Secrets (kubernetes.io/dockerconfigjson) of the release namespace to pull the image with, e.g. [{name: regcred}].',
  replicas: ' replicas: relay Pods; one leads (Lease), every one serves the HTTP API.',
  queues:
    ' queues: the SQS queue URLs of the reconcile, drift and health functions (required), and of the fleet function\n' +
    ' (ReleaseSets; optional: empty, the relay does not watch ReleaseSets) and of the notify function (Notifications;\n' +
    ' optional: empty, the relay does not watch Notifications).',
  aws: ' aws.region: region of the queues and the render bucket.',
  renderBucket: ' renderBucket: the render store bucket (renders and pins in the API); empty: none.',
  logLevel: ' logLevel: debug, info, warn or error.',
  tenantNamespaces:
    ' tenantNamespaces: namespaces whose Releases may act on this cluster (as their ServiceAccount); never kube-* or the release namespace.',
  watchSecrets:
    ' watchSecrets: true lets the relay list and watch Secrets (it then can read their data) to react to labelled Secrets at once.',
  egress:
    " egress.allow: what outbound requests on a tenant's behalf may reach beyond public addresses (CONVOY_EGRESS_ALLOW):\n" +
    " here the relay's (its tree view connects to Clusters' kubeconfig servers); the functions take the construct's\n" +
    ' egressAllow: give both the same list. Entries: a CIDR (10.0.0.0/8), IP[:port], [IPv6]:port, host[:port] or\n' +
    ' *.domain. Empty: public addresses only. When set, it replaces settings.CONVOY_EGRESS_ALLOW.',
  serviceAccount: ' serviceAccount.annotations: e.g. eks.amazonaws.com/role-arn for IRSA.',
  resources: " resources: the relay container's requests and limits.",
  podAnnotations:
    ` podAnnotations: added to the relay Pods (${CONFIG_CHECKSUM_ANNOTATION} is the chart's: a settings change rolls the Pods).\n` +
    " The TLS Secret convoy-relay-tls is not the chart's and is read at start: to roll on its rotation, e.g.\n" +
    ' secret.reloader.stakater.com/reload: convoy-relay-tls (Stakater Reloader).',
  podLabels: ` podLabels: added to the relay Pods; ${SELECTOR_LABEL} and ${PART_OF_LABEL} are the chart's and cannot be set.`,
  nodeSelector:
    ' Scheduling of the relay Pods (Kubernetes PodSpec fields): nodeSelector, tolerations, affinity, priorityClassName.',
  topologySpreadConstraints:
    ' topologySpreadConstraints: default spreads the Pods over nodes when it can; [] for none.',
  podDisruptionBudget:
    ' podDisruptionBudget: rendered only when enabled AND replicas > 1 (at one replica it would block every node drain).\n' +
    ' minAvailable (default 1), or maxUnavailable when set (then minAvailable is ignored); a number or a percentage.',
  serviceMonitor:
    " serviceMonitor: a prometheus-operator ServiceMonitor scraping the relay's /metrics (plain HTTP on the Service port\n" +
    ' http, open like the probes); needs the monitoring.coreos.com CRDs. labels: e.g. release: kube-prometheus-stack,\n' +
    " to match your Prometheus serviceMonitorSelector. interval/scrapeTimeout: empty = Prometheus' own.",
  settings:
    ' settings: installation settings, one environment variable of the relay each (tenancy defaults included);',
};

/** values.yaml with a comment above each key. `namespaceDependent` names the settings left out (they default to the release namespace). */
export function valuesYaml(
  values: Record<string, unknown>,
  header: string,
  namespaceDependent: readonly string[],
): string {
  const doc = new Document(values, { aliasDuplicateObjects: false });
  if (!isMap(doc.contents)) throw new Error('chart values: expected a map');
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    let comment = COMMENTS[key];
    if (comment === undefined) continue;
    if (key === 'settings')
      comment += `\n   left out here, defaulting to the release namespace: ${namespaceDependent.join(', ') || 'none'}.`;
    if (isScalar(pair.key)) {
      pair.key.commentBefore = comment;
      pair.key.spaceBefore = key !== 'image';
    }
  }
  return `${header}${doc.toString({ lineWidth: 0 })}`;
}

// --- templates of the chart's own -----------------------------------------------------------------

/** The optional ServiceMonitor: the Service's `http` port serves /metrics over plain HTTP (relay/http/app.ts). */
export function serviceMonitorTemplate(header: string, labels: Record<string, string>): string {
  const labelLines = Object.entries(labels).map(([k, v]) => `    ${k}: ${v}`);
  return [
    '{{- if .Values.serviceMonitor.enabled }}',
    header.trimEnd(),
    'apiVersion: monitoring.coreos.com/v1',
    'kind: ServiceMonitor',
    'metadata:',
    `  name: ${RELAY_NAME}`,
    '  namespace: {{ .Release.Namespace }}',
    '  labels:',
    ...labelLines,
    `    {{- with omit .Values.serviceMonitor.labels ${Object.keys(labels)
      .map((k) => JSON.stringify(k))
      .join(' ')} }}`,
    '    {{- toYaml . | nindent 4 }}',
    '    {{- end }}',
    'spec:',
    '  selector:',
    '    matchLabels:',
    `      ${SELECTOR_LABEL}: ${RELAY_NAME}`,
    '  namespaceSelector:',
    '    matchNames:',
    '      - {{ .Release.Namespace }}',
    '  endpoints:',
    '    - port: http',
    '      path: /metrics',
    '      scheme: http',
    '      {{- with .Values.serviceMonitor.interval }}',
    '      interval: {{ . }}',
    '      {{- end }}',
    '      {{- with .Values.serviceMonitor.scrapeTimeout }}',
    '      scrapeTimeout: {{ . }}',
    '      {{- end }}',
    '      {{- with .Values.serviceMonitor.relabelings }}',
    '      relabelings: {{- toYaml . | nindent 8 }}',
    '      {{- end }}',
    '      {{- with .Values.serviceMonitor.metricRelabelings }}',
    '      metricRelabelings: {{- toYaml . | nindent 8 }}',
    '      {{- end }}',
    '{{- end }}',
    '',
  ].join('\n');
}

/** NOTES.txt: where the relay runs, which image it pulls and how to build and push another. */
export function notesTemplate(): string {
  return [
    'convoy relay {{ .Chart.AppVersion }} installed in {{ .Release.Namespace }} (namespace of its Leases).',
    '',
    'Image: {{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}',
    'convoy publishes no relay image: this is the one you built and pushed. To build and push another,',
    'from a convoy checkout:',
    '  npm run image                                   # OCI layout in .convoy/image/oci, no Docker needed',
    '  crane push .convoy/image/oci {{ .Values.image.repository }}:<tag>',
    '  # or: docker build -f image/Dockerfile -t {{ .Values.image.repository }}:<tag> . && docker push {{ .Values.image.repository }}:<tag>',
    '  helm upgrade {{ .Release.Name }} <chart> -n {{ .Release.Namespace }} --reuse-values --set image.tag=<tag>',
    'Pods in ImagePullBackOff: the cluster cannot pull that image (not pushed, or a private registry:',
    'set imagePullSecrets, or give the nodes pull access).',
    '',
    'Check it: kubectl -n {{ .Release.Namespace }} rollout status deployment/' + RELAY_NAME,
    '{{- if .Values.serviceMonitor.enabled }}',
    'Metrics: ServiceMonitor {{ .Release.Namespace }}/' +
      RELAY_NAME +
      ' scrapes http://' +
      RELAY_NAME +
      '.{{ .Release.Namespace }}/metrics.',
    '{{- end }}',
    '{{- if and .Values.podDisruptionBudget.enabled (le (int .Values.replicas) 1) }}',
    'No PodDisruptionBudget at {{ .Values.replicas }} replica(s): one would block every node drain.',
    '{{- end }}',
    '',
  ].join('\n');
}

/** The chart's README.md. */
export function chartReadme(header: string): string {
  return `<!-- ${header.replace(/^# /, '').trim()} -->
# convoy chart

convoy's relay for a management cluster: the CRDs, RBAC, the relay Deployment (its settings in the
ConfigMap \`${RELAY_CONFIG_NAME}\`), Service, NetworkPolicy, and optionally a PodDisruptionBudget and a
ServiceMonitor. The control loops run as functions fed by SQS (the CDK construct makes them).

## The image

convoy publishes no relay image, so \`image.repository\` has no default and the chart refuses to
render without it. Build the image from a convoy checkout and push it to a registry of yours:

\`\`\`sh
npm run image                                      # an OCI layout in .convoy/image/oci, no Docker needed
crane push .convoy/image/oci <registry>/convoy-relay:0.1.0
# or: docker build -f image/Dockerfile -t <registry>/convoy-relay:0.1.0 . && docker push <registry>/convoy-relay:0.1.0
helm install convoy charts/convoy -n convoy-system --create-namespace \\
  --set image.repository=<registry>/convoy-relay \\
  --set queues.reconcile=URL,queues.drift=URL,queues.health=URL,aws.region=eu-west-1
\`\`\`

\`image.tag\` defaults to the chart's appVersion. A private registry: \`imagePullSecrets\`.

## Values

Every key is described in \`values.yaml\`; \`values.schema.json\` refuses unknown keys and wrong types
(\`--set replicas=two\` fails at install, upgrade, template and lint, naming the key).

| key | default | what |
| --- | --- | --- |
| \`image.repository\`, \`image.tag\`, \`image.pullPolicy\` | \`""\`, appVersion, \`IfNotPresent\` | the relay image (repository required) |
| \`imagePullSecrets\` | \`[]\` | \`[{name: regcred}]\` |
| \`replicas\` | \`2\` | one leads, all serve the API |
| \`queues.*\`, \`aws.region\`, \`renderBucket\` | | the functions' queues (required; \`queues.fleet\` optional), region, render store |
| \`logLevel\`, \`tenantNamespaces\`, \`watchSecrets\`, \`settings\` | | the installation's settings (ConfigMap) |
| \`egress.allow\` | | what the relay's requests on a tenant's behalf (Clusters' kubeconfig servers) may reach beyond public addresses: CIDRs, \`IP[:port]\`, \`host[:port]\`, \`*.domain\` (CONVOY_EGRESS_ALLOW; the functions take the construct's \`egressAllow\`) |
| \`serviceAccount.annotations\` | \`{}\` | e.g. IRSA's role ARN |
| \`resources\` | 100m / 256Mi, limit 512Mi | the relay container |
| \`podAnnotations\`, \`podLabels\` | \`{}\` | added to the Pods (not \`${CONFIG_CHECKSUM_ANNOTATION}\`, not \`${SELECTOR_LABEL}\` or \`${PART_OF_LABEL}\`) |
| \`nodeSelector\`, \`tolerations\`, \`affinity\`, \`priorityClassName\` | empty | scheduling |
| \`topologySpreadConstraints\` | spread over nodes, ScheduleAnyway | \`[]\` for none |
| \`podDisruptionBudget.enabled\`, \`.minAvailable\`, \`.maxUnavailable\` | \`true\`, \`1\`, unset | rendered only when enabled and \`replicas\` > 1 |
| \`serviceMonitor.enabled\`, \`.labels\`, \`.interval\`, \`.scrapeTimeout\`, \`.relabelings\`, \`.metricRelabelings\` | \`false\` | prometheus-operator ServiceMonitor for \`/metrics\` |

## Behaviour

- **A settings change rolls the relay.** The Pod template carries \`${CONFIG_CHECKSUM_ANNOTATION}\`, the
  sha256 of the rendered ConfigMap, so \`helm upgrade\` with a changed setting (queues, log level,
  tenancy, \`settings.*\`) replaces the Pods; the relay reads its settings only at start. The chart
  renders no Secret. The TLS Secret \`convoy-relay-tls\` (e.g. from cert-manager) is not the chart's
  and the relay reads it at start: restart the Deployment after a rotation, or let a reloader do it
  through \`podAnnotations\`.
- **The PodDisruptionBudget** (\`minAvailable: 1\`) exists only with more than one replica: at one
  replica it would block every node drain, as in ingress-nginx's and other popular charts.
- **The ServiceMonitor** (\`serviceMonitor.enabled\`) scrapes \`/metrics\` on the Service port \`http\`:
  plain HTTP, open like the probes, also when the API is served over TLS. It needs the
  prometheus-operator CRDs; without them the install fails saying so, rather than leaving metrics
  silently unscraped.
- **CRDs** are in \`crds/\`: Helm installs them and never upgrades or deletes them; upgrade them with
  \`kubectl apply --server-side -f charts/convoy/crds/\`.

This chart is generated from \`infra/relay-manifests.ts\` and \`infra/chart-values.ts\` (\`npm run gen:deploy\`).
`;
}
