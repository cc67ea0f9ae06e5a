/**
 * kubeconform with schemas made offline from the test kube-apiserver (docs/decisions.md "The Helm
 * chart follows Helm's conventions"): the binary is built from its Go module and cached by
 * scripts/build-kubeconform.sh; the JSON schemas are converted from the apiserver's /openapi/v2 (the
 * built-in kinds of the very Kubernetes version the tests run), from config/crds (convoy's own
 * kinds) and from test/harness/crds (third-party CRDs the chart renders objects of, vendored
 * unmodified with their origin: prometheus-operator's ServiceMonitor), written on demand for the
 * kinds a rendering holds, in a folder kubeconform reads with
 * `-schema-location <dir>/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`.
 *
 * The schemas are strict: an object with declared properties refuses any other (additionalProperties:
 * false, as kubeconform's `-strict` schemas are), unless it preserves unknown fields; int-or-string
 * fields take an integer or a string. Nothing is fetched from the network.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
/** Third-party CRDs (not served by the test apiserver), each file saying where it comes from. */
export const THIRD_PARTY_CRD_DIR = join(import.meta.dirname, 'crds');

type Schema = Record<string, unknown>;

export class KubeconformError extends Error {
  override name = 'KubeconformError';
}

/** scripts/build-kubeconform.sh: the cached binary, built on first use (~15 s). */
export async function ensureKubeconform(): Promise<string> {
  const { stdout } = await run('bash', [join(root, 'scripts', 'build-kubeconform.sh')], {
    maxBuffer: 1 << 20,
  });
  const bin = stdout.trim().split('\n').pop() ?? '';
  if (bin === '')
    throw new KubeconformError('scripts/build-kubeconform.sh printed no path; run it by hand to see why');
  return bin;
}

/** One OpenAPI v2 / CRD schema node as a JSON schema (draft 2020-12 keywords kubeconform understands). */
function convert(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(convert);
  if (typeof node !== 'object' || node === null) return node;
  const src = node as Schema;
  if (src['format'] === 'int-or-string' || src['x-kubernetes-int-or-string'] === true) {
    return {
      ...(src['description'] === undefined ? {} : { description: src['description'] }),
      oneOf: [{ type: 'string' }, { type: 'integer' }],
    };
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(src)) {
    // Formats (int32, byte, date-time…) are the apiserver's to check; CEL rules cannot be checked offline.
    if (key === 'format' || key === 'x-kubernetes-validations') continue;
    if (key === 'properties' || key === 'definitions' || key === 'patternProperties') {
      out[key] = Object.fromEntries(Object.entries(value as Schema).map(([k, v]) => [k, convert(v)]));
    } else if (['items', 'additionalProperties', 'not', 'allOf', 'anyOf', 'oneOf'].includes(key)) {
      out[key] = convert(value);
    } else {
      out[key] = value;
    }
  }
  if (src['nullable'] === true && typeof src['type'] === 'string') out['type'] = [src['type'], 'null'];
  if (
    src['properties'] !== undefined &&
    src['additionalProperties'] === undefined &&
    src['x-kubernetes-preserve-unknown-fields'] !== true
  ) {
    out['additionalProperties'] = false;
  }
  return out;
}

/** Every `#/definitions/<name>` a schema reaches, transitively. */
function closure(start: string, definitions: Record<string, Schema>): Set<string> {
  const seen = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== 'object' || value === null) return;
    for (const [key, v] of Object.entries(value as Schema)) {
      if (key === '$ref' && typeof v === 'string' && v.startsWith('#/definitions/')) {
        const name = v.slice('#/definitions/'.length);
        if (!seen.has(name)) {
          seen.add(name);
          visit(definitions[name]);
        }
      } else visit(v);
    }
  };
  seen.add(start);
  visit(definitions[start]);
  return seen;
}

interface Gvk {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** kubeconform's {{ .Group }}: the part of apiVersion before '/', so "v1" for the core group. */
const groupDir = (gvk: Gvk) => (gvk.group === '' ? gvk.version : gvk.group);
const keyOf = (gvk: Gvk) => `${groupDir(gvk)}/${gvk.kind.toLowerCase()}_${gvk.version}.json`;

export interface Kubeconform {
  /** The folder the schemas are written to. */
  readonly schemaDir: string;
  /**
   * Validates a multi-document YAML text (e.g. `helm template` output), strict. `skip`: kinds with no
   * schema here, each with the reason (printed). Throws naming every invalid object; returns the
   * kinds validated and skipped.
   */
  validate(yamlText: string, skip?: Record<string, string>): Promise<{ valid: string[]; skipped: string[] }>;
}

/**
 * A kubeconform over the schemas of the apiserver behind `kubeconfig` (its /openapi/v2, read once with
 * kubectl), of `crdDir` (default config/crds) and of `thirdPartyCrdDir` (default THIRD_PARTY_CRD_DIR).
 * `workDir` receives the schemas and the files checked.
 */
export async function createKubeconform(options: {
  kubectl: string;
  kubeconfig: string;
  workDir: string;
  crdDir?: string;
  thirdPartyCrdDir?: string;
}): Promise<Kubeconform> {
  const bin = await ensureKubeconform();
  const { stdout } = await run(
    options.kubectl,
    ['--kubeconfig', options.kubeconfig, 'get', '--raw', '/openapi/v2'],
    { maxBuffer: 256 << 20 },
  );
  const definitions = (JSON.parse(stdout) as { definitions: Record<string, Schema> }).definitions;
  const schemas = new Map<string, () => Schema>();
  for (const [name, def] of Object.entries(definitions)) {
    for (const gvk of (def['x-kubernetes-group-version-kind'] ?? []) as Gvk[]) {
      schemas.set(keyOf(gvk), () => {
        const reached = closure(name, definitions);
        return {
          $ref: `#/definitions/${name}`,
          definitions: Object.fromEntries([...reached].map((n) => [n, convert(definitions[n] ?? {})])),
        };
      });
    }
  }
  // convoy's CRDs from the repository (the apiserver's copy may be another test's older install), then
  // the vendored third-party ones.
  const crdFiles = async (dir: string) =>
    (await readdir(dir)).filter((f) => f.endsWith('.yaml')).map((f) => join(dir, f));
  const crdPaths = [
    ...(await crdFiles(options.crdDir ?? join(root, 'config', 'crds'))),
    ...(await crdFiles(options.thirdPartyCrdDir ?? THIRD_PARTY_CRD_DIR)),
  ];
  for (const path of crdPaths) {
    for (const doc of parseAllDocuments(await readFile(path, 'utf8'))) {
      const crd = doc.toJS() as {
        spec: {
          group: string;
          names: { kind: string };
          versions: { name: string; schema?: { openAPIV3Schema?: Schema } }[];
        };
      } | null;
      if (crd === null) continue;
      for (const version of crd.spec.versions) {
        const schema = version.schema?.openAPIV3Schema;
        if (schema === undefined) continue;
        schemas.set(
          keyOf({ group: crd.spec.group, version: version.name, kind: crd.spec.names.kind }),
          () => convert(schema) as Schema,
        );
      }
    }
  }
  const schemaDir = join(options.workDir, 'schemas');
  const written = new Set<string>();
  let checked = 0;

  return {
    schemaDir,
    async validate(yamlText, skip = {}) {
      const docs = parseAllDocuments(yamlText)
        .map((d) => d.toJS() as { apiVersion?: string; kind?: string } | null)
        .filter((d): d is { apiVersion: string; kind: string } => d !== null && typeof d.kind === 'string');
      for (const doc of docs) {
        if (doc.kind in skip) continue;
        const [group, version] = doc.apiVersion.includes('/')
          ? doc.apiVersion.split('/')
          : ['', doc.apiVersion];
        const key = keyOf({ group: group ?? '', version: version ?? '', kind: doc.kind });
        if (written.has(key)) continue;
        const make = schemas.get(key);
        if (make === undefined)
          throw new KubeconformError(
            `no schema for ${doc.apiVersion} ${doc.kind}: the apiserver does not serve it and neither config/crds nor test/harness/crds defines it; vendor its CRD in test/harness/crds, or pass it in skip with the reason`,
          );
        await mkdir(join(schemaDir, key, '..'), { recursive: true });
        await writeFile(join(schemaDir, key), JSON.stringify(make()));
        written.add(key);
      }
      for (const [kind, reason] of Object.entries(skip)) {
        if (docs.some((d) => d.kind === kind))
          process.stderr.write(`kubeconform: ${kind} not validated: ${reason}\n`);
      }
      const file = join(options.workDir, `checked-${++checked}.yaml`);
      await writeFile(file, yamlText);
      const args = [
        '-strict',
        '-summary',
        '-verbose',
        '-output',
        'json',
        '-schema-location',
        `${schemaDir}/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json`,
        ...(Object.keys(skip).length > 0 ? ['-skip', Object.keys(skip).join(',')] : []),
        file,
      ];
      const result = await run(bin, args, { maxBuffer: 64 << 20 }).catch((error: unknown) => {
        const e = error as { stdout?: string; stderr?: string; code?: number };
        if (e.stdout === undefined || e.stdout === '')
          throw new KubeconformError(
            `kubeconform failed (exit ${String(e.code)}): ${e.stderr ?? String(error)}`,
          );
        return { stdout: e.stdout, stderr: e.stderr ?? '' };
      });
      // An empty document (helm's leading '---', a template rendering nothing) has no status.
      const report = JSON.parse(result.stdout) as {
        resources: { kind: string; name: string; status: string; msg: string }[];
      };
      const bad = report.resources.filter(
        (r) => !['statusValid', 'statusSkipped', 'statusEmpty', ''].includes(r.status),
      );
      if (bad.length > 0) {
        throw new KubeconformError(
          `kubeconform refused ${bad.length} object(s) of ${file}:\n${bad.map((r) => `  ${r.kind} ${r.name}: ${r.status} ${r.msg}`).join('\n')}`,
        );
      }
      return {
        valid: report.resources.filter((r) => r.status === 'statusValid').map((r) => `${r.kind}/${r.name}`),
        skipped: report.resources
          .filter((r) => r.status === 'statusSkipped')
          .map((r) => `${r.kind}/${r.name}`),
      };
    },
  };
}
