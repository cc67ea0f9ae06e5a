/**
 * The files of the two non-CDK install paths, generated from relayManifests() (the one source):
 *
 * - `deploy/`: plain YAML for `kubectl apply -f deploy/` (crds.yaml, then convoy.yaml);
 * - `charts/convoy`: a Helm chart whose templates are the same objects with Helm expressions
 *   in place of the values a user sets (queues, region, image, replicas, installation settings):
 *   chart-files.ts, with chart-templates.ts.
 *
 * scripts/gen-deploy.ts writes them; test/unit/infra/install-files.test.ts fails when the files
 * on disk differ from what this module generates. `convoy install --print` prints deployYaml().
 * Pure: no file system writes.
 */
import {
  DEFAULT_INSTALLATION_NAMESPACE,
  RELAY_CONFIG_NAME,
  RELAY_IMAGE_PLACEHOLDER,
  RELAY_NAME,
  manifestsToYaml,
  relayManifests,
} from './relay-manifests.ts';
import { chartFiles } from './chart-files.ts';
import { GENERATED, withDefaults, type DeployOptions } from './install-defaults.ts';

export { CHART_NAME, chartFiles } from './chart-files.ts';
export { PLACEHOLDER_QUEUE_URLS, PLACEHOLDER_REGION, type DeployOptions } from './install-defaults.ts';

/** CRDs first, then everything else, as one multi-document YAML (what `convoy install --print` prints). */
export function deployYaml(options: DeployOptions = {}): string {
  return manifestsToYaml(relayManifests(withDefaults(options)));
}

/** deploy/<file> → content. */
export function deployFiles(): Map<string, string> {
  const manifests = relayManifests(withDefaults({}));
  const crds = manifests.filter((m) => m.kind === 'CustomResourceDefinition');
  const rest = manifests.filter((m) => m.kind !== 'CustomResourceDefinition');
  return new Map([
    [
      'deploy/crds.yaml',
      `# ${GENERATED}\n# Apply first: kubectl apply --server-side -f deploy/crds.yaml\n${manifestsToYaml(crds)}`,
    ],
    [
      'deploy/convoy.yaml',
      `# ${GENERATED}\n# Set the queue URLs and region in the ConfigMap ${RELAY_CONFIG_NAME} and the relay image in the Deployment\n` +
        `# (or print this file with yours: convoy install --print --image <registry>/convoy-relay:<tag>\n` +
        `#   --reconcile-queue-url URL --drift-queue-url URL --health-queue-url URL --region R).\n` +
        `# The relay image is not published: build it (npm run image, or docker build -f image/Dockerfile .) and push it\n` +
        `# to a registry of yours. Until then the Deployment names ${RELAY_IMAGE_PLACEHOLDER}, which is no valid\n` +
        `# image reference: its Pods stop at once with InvalidImageName and nothing is pulled. After applying this file:\n` +
        `#   kubectl -n ${DEFAULT_INSTALLATION_NAMESPACE} set image deployment/${RELAY_NAME} relay=<registry>/convoy-relay:<tag>\n` +
        manifestsToYaml(rest),
    ],
  ]);
}

/** Every generated install file: deploy/ and charts/convoy. */
export function installFiles(version: string): Map<string, string> {
  return new Map([...deployFiles(), ...chartFiles(version)]);
}

export { DEFAULT_INSTALLATION_NAMESPACE };
