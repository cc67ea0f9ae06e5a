// ociResolve: resolution time per Release and registry requests per
// reconcile for OCI sources, against the real registry (distribution v3.1.2,
// test/harness/oci-registry.ts, plain HTTP, anonymous) — no apiserver: the resolution code
// (adapters/source/oci-helm.ts, adapters/source/oci-artifact.ts) is called directly, counting
// requests through its `onRequest` hook, as the integration tests do.
//
// Pushed: a chart `bench-app` 1.0.0, 1.1.0, 1.2.0, 2.0.0 with the real `helm push`, and a manifests
// artifact `manifests/bench-app` with the same tags (the format `flux push artifact` writes,
// dev/oci-artifact-push.ts). Each of `n` Releases has a cache folder of its own (an empty cache:
// its first pull downloads) and is resolved, one after another, as its reconciles would be:
//   exactTagFirstPull  exact version / ref.tag 1.2.0, empty cache;
//   exactTagUnchanged  the same again (the tag still names the cached digest);
//   semverRange        ^1.0.0 (→ 1.2.0, cached);
//   digest             the manifest digest of 1.2.0 (cached).
// Targets: a digest-pinned Release makes no tag list; an unchanged tag costs one request (a
// manifest HEAD).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fetchOciArtifact, type OciArtifactRef } from '../../adapters/source/oci-artifact.ts';
import { fetchOciHelmChart } from '../../adapters/source/oci-helm.ts';
import { createEgress } from '../../adapters/egress/client.ts';
import { parseEgressAllow } from '../../domain/egress/policy.ts';
import { pushArtifact, tarGz } from '../../dev/oci-artifact-push.ts';
import { startOciRegistry, type OciRegistry } from '../../test/harness/oci-registry.ts';
import { ms, percentile } from '../lib/stats.ts';
import { log } from '../lib/stdout.ts';

const VERSIONS = ['1.0.0', '1.1.0', '1.2.0', '2.0.0'] as const;
const PINNED = '1.2.0';
const RANGE = '^1.0.0';
const KINDS = ['exactTagFirstPull', 'exactTagUnchanged', 'semverRange', 'digest'] as const;
type Kind = (typeof KINDS)[number];

interface Requests {
  tagLists: number;
  manifestHeads: number;
  manifestGets: number;
  blobGets: number;
  total: number;
}

interface Sample {
  ms: number;
  requests: Requests;
}

const MANIFEST_PATH = /\/manifests\/[^/]+$/;
const BLOB_PATH = /\/blobs\/[^/]+$/;

function classify(calls: readonly { method: string; path: string }[]): Requests {
  const count = (test: (c: { method: string; path: string }) => boolean) => calls.filter(test).length;
  return {
    tagLists: count((c) => c.path.endsWith('/tags/list')),
    // The last segment names the reference: a repository may itself be called `manifests/…`.
    manifestHeads: count((c) => c.method === 'HEAD' && MANIFEST_PATH.test(c.path)),
    manifestGets: count((c) => c.method === 'GET' && MANIFEST_PATH.test(c.path)),
    blobGets: count((c) => BLOB_PATH.test(c.path)),
    total: calls.length,
  };
}

/** Runs one resolve, timing it and counting its registry requests. */
async function measure(
  resolve: (onRequest: (method: string, path: string) => void) => Promise<unknown>,
): Promise<Sample> {
  const calls: { method: string; path: string }[] = [];
  const t = performance.now();
  await resolve((method, path) => calls.push({ method, path }));
  return { ms: performance.now() - t, requests: classify(calls) };
}

function summarize(samples: readonly Sample[]) {
  const times = samples.map((s) => s.ms);
  const max = (key: keyof Requests) => Math.max(...samples.map((s) => s.requests[key]));
  const first = samples[0]?.requests;
  return {
    releases: samples.length,
    resolveMs: {
      p50: ms(percentile(times, 50) ?? Number.NaN),
      p95: ms(percentile(times, 95) ?? Number.NaN),
      max: ms(Math.max(...times)),
    },
    requestsPerReconcile: {
      tagLists: max('tagLists'),
      manifestHeads: max('manifestHeads'),
      manifestGets: max('manifestGets'),
      blobGets: max('blobGets'),
      total: max('total'),
    },
    sameForEveryRelease: samples.every((s) => JSON.stringify(s.requests) === JSON.stringify(first)),
  };
}

type Resolver = (
  ref: { version?: string; digest?: string },
  cache: string,
  onRequest: (method: string, path: string) => void,
) => Promise<unknown>;

async function runKinds(n: number, digest: string, resolver: Resolver, work: string, label: string) {
  const samples: Record<Kind, Sample[]> = {
    exactTagFirstPull: [],
    exactTagUnchanged: [],
    semverRange: [],
    digest: [],
  };
  for (let i = 0; i < n; i++) {
    const cache = await mkdtemp(join(work, `${label}-${i}-`));
    samples.exactTagFirstPull.push(await measure((on) => resolver({ version: PINNED }, cache, on)));
    samples.exactTagUnchanged.push(await measure((on) => resolver({ version: PINNED }, cache, on)));
    samples.semverRange.push(await measure((on) => resolver({ version: RANGE }, cache, on)));
    samples.digest.push(await measure((on) => resolver({ digest }, cache, on)));
  }
  return Object.fromEntries(KINDS.map((k) => [k, summarize(samples[k])])) as Record<
    Kind,
    ReturnType<typeof summarize>
  >;
}

const configMap = (version: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bench-app\ndata:\n  version: "${version}"\n`;

async function pushAll(registry: OciRegistry): Promise<{ chartDigest: string; artifactDigest: string }> {
  let chartDigest = '';
  let artifactDigest = '';
  for (const version of VERSIONS) {
    const chart = await registry.pushChart('charts', 'bench-app', version, `bench ${version}`);
    const artifact = await pushArtifact(
      { registry: registry.host, repository: 'manifests/bench-app', tag: version, plainHttp: true },
      tarGz([{ name: 'cm.yaml', content: configMap(version) }]),
    );
    if (version === PINNED) {
      chartDigest = chart.digest;
      artifactDigest = artifact.digest;
    }
  }
  return { chartDigest, artifactDigest };
}

export async function benchOciResolve(options: { n: number }) {
  const registry = await startOciRegistry();
  const work = await mkdtemp(join(tmpdir(), 'convoy-bench-oci-'));
  try {
    log(
      `ociResolve: registry ${registry.host}; pushing ${VERSIONS.length} chart versions (helm push) and artifacts`,
    );
    const { chartDigest, artifactDigest } = await pushAll(registry);
    // The registry runs on 127.0.0.1: the egress allow list opens exactly it.
    const egress = createEgress({ allow: parseEgressAllow(registry.host, 'bench'), clusterNetworks: [] });

    log(`ociResolve: ${options.n} Releases of an OCI Helm chart`);
    const helm = await runKinds(
      options.n,
      chartDigest,
      (ref, cache, onRequest) =>
        fetchOciHelmChart(
          { repository: registry.url('charts'), chart: 'bench-app', plainHttp: true, ...ref },
          cache,
          { onRequest, egress },
        ),
      work,
      'helm',
    );

    log(`ociResolve: ${options.n} Releases of an OCI manifests artifact`);
    const artifactRef = (ref: { version?: string; digest?: string }): OciArtifactRef =>
      ref.digest !== undefined
        ? { digest: ref.digest }
        : ref.version === RANGE
          ? { semver: RANGE }
          : { tag: ref.version };
    const artifact = await runKinds(
      options.n,
      artifactDigest,
      (ref, cache, onRequest) =>
        fetchOciArtifact(
          { url: registry.url('manifests/bench-app'), ref: artifactRef(ref), plainHttp: true },
          cache,
          { onRequest, egress },
        ),
      work,
      'artifact',
    );

    const measured = {
      digestTagLists: Math.max(
        helm.digest.requestsPerReconcile.tagLists,
        artifact.digest.requestsPerReconcile.tagLists,
      ),
      unchangedTagRequests: Math.max(
        helm.exactTagUnchanged.requestsPerReconcile.total,
        artifact.exactTagUnchanged.requestsPerReconcile.total,
      ),
    };
    const targets = { digestTagLists: 0, unchangedTagRequests: 1 };
    return {
      registry: 'distribution registry v3.1.2, 127.0.0.1, plain HTTP, anonymous',
      pushed: { versions: [...VERSIONS], pinned: PINNED, range: RANGE },
      releases: options.n,
      note: 'each Release has its own cache folder; its four resolves run in order: exact tag on an empty cache, the same tag again, the range, the digest',
      helm,
      artifact,
      targets,
      measured,
      met:
        measured.digestTagLists <= targets.digestTagLists &&
        measured.unchangedTagRequests <= targets.unchangedTagRequests,
    };
  } finally {
    await registry.stop();
    await rm(work, { recursive: true, force: true });
  }
}
