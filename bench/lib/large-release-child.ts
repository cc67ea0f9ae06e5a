// One reconcile of one Release through the reconcile function's record handler, in a process of
// its own, so that its peak RSS (VmHWM) is the reconcile's alone — as the reconcile function's
// memory setting limits it — and not the bench's (git server, fauxqs, watches). Used by the
// largeRelease section (bench/sections/large-release.ts).
//
// Input: the JSON of LargeReleaseChildInput in the environment variable LARGE_RELEASE_CHILD.
// Output: one JSON line (LargeReleaseChildResult) on stdout.
import { S3Client } from '@aws-sdk/client-s3';
import { kubeClientConfig } from '../../adapters/kube/kubeconfig.ts';
import { createStatusWriter, type StatusWriter } from '../../adapters/kube/status-writer.ts';
import { createReconcilePorts } from '../../adapters/reconcile/create-ports.ts';
import { createS3RenderStore } from '../../adapters/store/s3-render-store.ts';
import type { TenancySettings } from '../../domain/tenancy/settings.ts';
import { parseEgressAllow } from '../../domain/egress/policy.ts';
import type { LargeReleaseChildInput, LargeReleaseChildResult } from './large-release-input.ts';
import { createReleaseSource } from '../../adapters/kube/release-source.ts';
import { createReconcileRecordHandler } from '../../functions/reconcile/reconcile-record.ts';
import { createLogger } from '../../platform/logger.ts';

const MiB = 1024 * 1024;

/** The TenancySettings of the JSON form (no EKS roles, no insecure registries: the bench uses neither). */
function tenancyOf(t: LargeReleaseChildInput['tenancy']): TenancySettings {
  return {
    defaultServiceAccount: t.defaultServiceAccount,
    inClusterNamespaces: t.inClusterNamespaces === 'all' ? 'all' : new Set(t.inClusterNamespaces),
    crossNamespaceRefs: t.crossNamespaceRefs,
    eksRoles: [],
    // The env's egress allow list (its Git server on loopback).
    ...(t.egressAllow
      ? { egress: { allow: parseEgressAllow(t.egressAllow, 'egressAllow'), clusterNetworks: [] } }
      : {}),
  };
}

async function main(): Promise<void> {
  const input = JSON.parse(process.env['LARGE_RELEASE_CHILD'] ?? '{}') as LargeReleaseChildInput;
  const kube = kubeClientConfig(input.kube);
  const s3 = new S3Client({
    endpoint: input.s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const store = createS3RenderStore({ s3, bucket: input.s3.bucket });
  let maxHeap = 0;
  const sampler = setInterval(() => {
    maxHeap = Math.max(maxHeap, process.memoryUsage().heapUsed);
  }, 50);
  const started = performance.now();
  const writer = createStatusWriter(kube);
  const writes: number[] = [];
  const statusWriter: StatusWriter = {
    async apply(key, write) {
      const result = await writer.apply(key, write);
      writes.push(Math.round(performance.now() - started));
      return result;
    },
  };
  const logger = createLogger({ base: { bench: 'largeRelease' }, level: 'error' });
  const ports = createReconcilePorts({
    managementKubeConfig: kube,
    store,
    cacheDir: input.cacheDir,
    tenancy: tenancyOf(input.tenancy),
    renderLimits: { maxObjects: input.maxRenderObjects },
  });
  const handler = createReconcileRecordHandler({
    releases: createReleaseSource(kube),
    statusWriter,
    ports,
    notify: () => Promise.resolve(),
    progress: { intervalMs: input.progressIntervalMs },
  });
  const outcome = await handler(
    {
      v: 1,
      loop: 'reconcile',
      namespace: input.namespace,
      name: input.name,
      uid: input.uid,
      cause: 'bench largeRelease',
      sentAt: new Date().toISOString(),
    },
    { logger, receiveCount: 1, messageId: 'bench', record: {} as never },
  );
  const wallMs = Math.round(performance.now() - started);
  clearInterval(sampler);
  maxHeap = Math.max(maxHeap, process.memoryUsage().heapUsed);
  s3.destroy();
  const result: LargeReleaseChildResult = {
    outcome: outcome.kind === 'retry' ? `retry: ${String(outcome.error)}` : outcome.kind,
    wallMs,
    maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    maxHeapUsedMiB: Math.round(maxHeap / MiB),
    statusWrites: writes.length,
    statusWriteAtMs: writes,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `large-release-child: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
