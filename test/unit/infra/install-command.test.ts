import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { installCommand, MISSING_IMAGE } from '../../../cli/install.ts';
import { deployYaml } from '../../../infra/install-files.ts';

const IMAGE = 'reg.example/convoy-relay:1';

/** Runs with CONVOY_RELAY_IMAGE unset unless `env` sets it (the image is required). */
function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let out = '';
  const err: string[] = [];
  const code = installCommand(argv, { out: (t) => (out += t), err: (l) => err.push(l) }, env);
  return { code, out, err };
}

const q = [
  '--reconcile-queue-url',
  'https://sqs.eu-west-1.amazonaws.com/1/r',
  '--drift-queue-url',
  'https://sqs.eu-west-1.amazonaws.com/1/d',
  '--health-queue-url',
  'https://sqs.eu-west-1.amazonaws.com/1/h',
];

describe('convoy install --print', () => {
  it('with only --image prints the same manifests as deploy/, with that image', () => {
    const r = run(['--print', '--image', IMAGE]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(deployYaml({ image: IMAGE }));
  });

  it('without --image: one line saying how to build and push the image, exit 2, nothing printed', () => {
    const r = run(['--print']);
    expect(r).toEqual({ code: 2, out: '', err: [`convoy install: ${MISSING_IMAGE}`] });
    expect(MISSING_IMAGE).toMatch(/npm run image/);
    expect(MISSING_IMAGE).toMatch(/CONVOY_RELAY_IMAGE/);
  });

  it('CONVOY_RELAY_IMAGE names the image when --image is not given; --image wins over it', () => {
    expect(run(['--print'], { CONVOY_RELAY_IMAGE: IMAGE }).out).toBe(deployYaml({ image: IMAGE }));
    expect(run(['--print', '--image', 'other.example/relay:2'], { CONVOY_RELAY_IMAGE: IMAGE }).out).toContain(
      'image: other.example/relay:2',
    );
  });

  it('puts the queue URLs, region, namespace and image where the relay reads them', () => {
    const r = run(['--print', ...q, '--region', 'eu-west-1', '-n', 'convoy', '--image', IMAGE, '--no-crds']);
    expect(r.code).toBe(0);
    const docs = parseAllDocuments(r.out).map(
      (d) => d.toJS() as { kind: string; metadata: { namespace?: string }; data?: Record<string, string> },
    );
    expect(docs.some((d) => d.kind === 'CustomResourceDefinition')).toBe(false);
    const config = docs.find((d) => d.kind === 'ConfigMap');
    expect(config?.metadata.namespace).toBe('convoy');
    expect(config?.data).toMatchObject({
      CONVOY_RECONCILE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/r',
      AWS_REGION: 'eu-west-1',
      CONVOY_NAMESPACE: 'convoy',
    });
    expect(r.out).toContain('image: reg.example/convoy-relay:1');
  });

  it('--fleet-queue-url sets CONVOY_FLEET_QUEUE_URL; without it the ConfigMap has none and the relay watches no ReleaseSet', () => {
    const configOf = (out: string) =>
      parseAllDocuments(out)
        .map((d) => d.toJS() as { kind: string; data?: Record<string, string> })
        .find((d) => d.kind === 'ConfigMap')?.data;
    const fleet = 'https://sqs.eu-west-1.amazonaws.com/1/f';
    expect(
      configOf(run(['--print', ...q, '--fleet-queue-url', fleet, '--image', IMAGE, '--no-crds']).out),
    ).toMatchObject({
      CONVOY_RECONCILE_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/1/r',
      CONVOY_FLEET_QUEUE_URL: fleet,
    });
    // Alone, next to the placeholders of the three others.
    expect(
      configOf(run(['--print', '--fleet-queue-url', fleet, '--image', IMAGE, '--no-crds']).out),
    ).toMatchObject({
      CONVOY_RECONCILE_QUEUE_URL: 'CHANGE-ME-reconcile-queue-url',
      CONVOY_FLEET_QUEUE_URL: fleet,
    });
    expect(configOf(run(['--print', ...q, '--image', IMAGE, '--no-crds']).out)).not.toHaveProperty(
      'CONVOY_FLEET_QUEUE_URL',
    );
    expect(run(['--print', '--fleet-queue-url', 'nope', '--image', IMAGE]).err[0]).toMatch(
      /--fleet-queue-url: "nope" is not a URL/,
    );
  });

  it('bad input: names the flag and exits 2', () => {
    expect(run(['--print', '--reconcile-queue-url', 'https://x/r']).err[0]).toMatch(/give all three or none/);
    expect(run(['--print', ...q.slice(0, 5), 'not a url']).err[0]).toMatch(
      /--health-queue-url: "not a url" is not a URL/,
    );
    expect(run(['--print', '--replicas', '0'])).toMatchObject({ code: 2 });
    expect(run(['--print', '--namespace', 'Bad_NS']).err[0]).toMatch(/--namespace/);
    expect(run(['--print', '--bogus']).code).toBe(2);
    expect(run([]).err[0]).toMatch(/only prints \(--print\)/);
  });
});
