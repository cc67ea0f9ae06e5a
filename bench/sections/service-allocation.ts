// serviceAllocation: how fast this kube-apiserver creates Services when nothing else runs — the
// bound behind the Flux section's wall times. kube-apiserver 1.34 allocates ClusterIPs
// under one mutex held across a loopback IPAddress create, and every Service dry run takes that
// mutex too, so Service creation is serialized whoever sends it. N Services (ClusterIP, one port)
// by server-side apply, `concurrency` in flight: first all as dry runs, then for real.
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { inPool } from '../flux/side-process.ts';
import { percentile } from '../lib/stats.ts';

const NAMESPACE = 'bench-service-allocation';

export async function benchServiceAllocation(
  kc: KubeConfig,
  options: { n: number; concurrency: number },
): Promise<Record<string, unknown>> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
  const service = (i: number) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `s${i}`, namespace: NAMESPACE },
    spec: { selector: { app: 'app' }, ports: [{ port: 80, targetPort: 8080 }] },
  });
  const phase = async (dryRun: boolean) => {
    const latencies: number[] = [];
    const t = performance.now();
    await inPool(
      Array.from({ length: options.n }, (_, i) => i),
      options.concurrency,
      async (i) => {
        const t1 = performance.now();
        await core.patchNamespacedService(
          {
            name: `s${i}`,
            namespace: NAMESPACE,
            body: service(i),
            fieldManager: 'bench',
            force: true,
            ...(dryRun ? { dryRun: 'All' } : {}),
          },
          setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
        );
        latencies.push(performance.now() - t1);
      },
    );
    const seconds = (performance.now() - t) / 1000;
    return {
      seconds: Math.round(seconds * 10) / 10,
      perSecond: Math.round(options.n / seconds),
      latencyMs: {
        p50: Math.round(percentile(latencies, 50) ?? 0),
        p90: Math.round(percentile(latencies, 90) ?? 0),
        max: Math.round(percentile(latencies, 100) ?? 0),
      },
    };
  };
  try {
    const dryRun = await phase(true);
    const create = await phase(false);
    return { services: options.n, concurrency: options.concurrency, dryRun, create };
  } finally {
    await core.deleteNamespace({ name: NAMESPACE }).catch(() => undefined);
  }
}
