// `convoy status <namespace>/<name>` and `convoy wait <namespace>/<name>`: the combined verdict.
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { fromClientNodeKubeConfig } from '../adapters/kube/client-node-config.ts';
import { createReleaseSource } from '../functions/reconcile/reconcile-record.ts';
import { parseRelease } from '../domain/api/objects.ts';
import { parseDuration } from '../domain/runtime/duration.ts';
import { combinedVerdict, type Verdict } from '../domain/status/verdict.ts';

export const statusUsage = `convoy status <namespace>/<name>         the combined verdict of a Release
convoy wait <namespace>/<name> [--timeout 5m]   wait until Ready (exit 0), a failure (exit 1) or the timeout (exit 2)`;

function target(arg: string | undefined): { namespace: string; name: string } {
  const [namespace, name] = (arg ?? '').split('/');
  if (!namespace || !name) throw new Error(`expected <namespace>/<name>, got "${arg ?? ''}"`);
  return { namespace, name };
}

async function verdictOf(kc: KubeConfig, key: { namespace: string; name: string }): Promise<Verdict> {
  const raw = await createReleaseSource(fromClientNodeKubeConfig(kc)).get(key.namespace, key.name);
  if (raw === undefined) throw new Error(`Release ${key.namespace}/${key.name} does not exist`);
  const parsed = parseRelease(raw);
  if (!parsed.ok) throw new Error(`Release ${key.namespace}/${key.name} does not parse: ${parsed.error}`);
  return combinedVerdict(parsed.value);
}

function describe(v: Verdict): string {
  return v.ready ? `Ready: ${v.message}` : `${v.kind === 'failure' ? 'Failed' : 'Waiting'} (${v.signal}): ${v.message}`;
}

export async function statusCommand(argv: string[]): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const verdict = await verdictOf(kc, target(argv[0]));
  console.log(describe(verdict));
  process.exitCode = verdict.ready ? 0 : verdict.kind === 'failure' ? 1 : 3;
}

export async function waitCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { timeout: { type: 'string', default: '5m' } } });
  const timeout = parseDuration(values.timeout);
  if (!timeout.ok) throw new Error(`--timeout: ${timeout.error}`);
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const key = target(positionals[0]);
  const deadline = Date.now() + timeout.ms;
  for (;;) {
    const verdict = await verdictOf(kc, key);
    if (verdict.ready || verdict.kind === 'failure' || Date.now() > deadline) {
      console.log(describe(verdict));
      process.exitCode = verdict.ready ? 0 : verdict.kind === 'failure' ? 1 : 2;
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}
