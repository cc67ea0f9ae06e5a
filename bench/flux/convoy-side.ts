// convoy's side of the Flux bench as a process of its own, so that /proc measures its CPU and
// memory alone: the `convoy dev` runtime (dev/runtime.ts: relay, one poller per queue calling
// the real function handlers, fauxqs as SQS/S3) against the kubeconfig in $KUBECONFIG (its
// current context is the side's own identity). Prints `ready` on stdout once the relay has
// listed everything; stops on SIGTERM.
import { KubeConfig } from '@kubernetes/client-node';
import { startConvoyRuntime } from '../../dev/runtime.ts';
import { createLogger } from '../../platform/logger.ts';

const kc = new KubeConfig();
kc.loadFromDefault();
const logger = createLogger({
  base: { bench: 'flux/convoy-side' },
  level: (process.env['CONVOY_BENCH_LOG_LEVEL'] as 'warn' | undefined) ?? 'warn',
  write: (line) => void process.stderr.write(`${line}\n`),
});
const runtime = await startConvoyRuntime({
  kc,
  logger,
  ...(process.env['CONVOY_BENCH_POLLER_CONCURRENCY']
    ? { pollerConcurrency: Number(process.env['CONVOY_BENCH_POLLER_CONCURRENCY']) }
    : {}),
});
const started = Date.now();
while (!runtime.relay.ready()) {
  if (Date.now() - started > 60_000) throw new Error('the relay was not ready within 60 s');
  await new Promise((resolve) => setTimeout(resolve, 50));
}
process.stdout.write('ready\n');
await new Promise<void>((resolve) => {
  process.once('SIGTERM', () => resolve());
  process.once('SIGINT', () => resolve());
});
await runtime.stop();
