// The chart's egress.allow, rendered by the real helm: a list that becomes the relay ConfigMap's
// CONVOY_EGRESS_ALLOW (read back by the same parser the relay and functions use), replacing
// settings.CONVOY_EGRESS_ALLOW when both are set; values.schema.json refuses a string, an entry
// with a comma or a space, and an unknown key under egress.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createToolLocator } from '../../../adapters/tools/binaries.ts';
import { formatAllowEntry } from '../../../domain/egress/policy.ts';
import { tenancyFromEnv } from '../../../platform/tenancy-config.ts';

const run = promisify(execFile);
const chart = join(import.meta.dirname, '..', '..', '..', 'charts', 'convoy');
const REQUIRED = {
  image: { repository: '111111111111.dkr.ecr.eu-west-1.amazonaws.com/convoy-relay' },
  queues: {
    reconcile: 'https://sqs.eu-west-1.amazonaws.com/111111111111/r',
    drift: 'https://sqs.eu-west-1.amazonaws.com/111111111111/d',
    health: 'https://sqs.eu-west-1.amazonaws.com/111111111111/h',
  },
};

describe("the chart's egress.allow", { timeout: 60_000 }, () => {
  let helm: string;
  let dir: string;
  let n = 0;
  beforeAll(async () => {
    helm = (await createToolLocator().locate()).helm;
    dir = await mkdtemp(join(tmpdir(), 'convoy-chart-egress-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function template(values: Record<string, unknown>) {
    const file = join(dir, `values-${++n}.json`);
    await writeFile(file, JSON.stringify({ ...REQUIRED, ...values }));
    return run(helm, ['template', 'convoy', chart, '-f', file, '--show-only', 'templates/configmap.yaml'], {
      env: { HOME: dir, PATH: '' },
    });
  }
  async function configMap(values: Record<string, unknown>): Promise<Record<string, string>> {
    const { stdout } = await template(values);
    const [doc] = parseAllDocuments(stdout, { uniqueKeys: true });
    expect(doc?.errors).toEqual([]);
    return (doc?.toJS() as { data: Record<string, string> }).data;
  }

  it('default: no CONVOY_EGRESS_ALLOW (public addresses only)', async () => {
    expect(await configMap({})).not.toHaveProperty('CONVOY_EGRESS_ALLOW');
  });

  it('a list becomes CONVOY_EGRESS_ALLOW, read back as the policy', async () => {
    const data = await configMap({
      egress: { allow: ['10.0.0.0/8', 'registry.internal:5000', '*.corp.example'] },
    });
    expect(data['CONVOY_EGRESS_ALLOW']).toBe('10.0.0.0/8,registry.internal:5000,*.corp.example');
    expect(tenancyFromEnv(data).egress?.allow.map(formatAllowEntry)).toEqual([
      '10.0.0.0/8',
      'registry.internal:5000',
      '*.corp.example',
    ]);
  });

  it('settings.CONVOY_EGRESS_ALLOW still works alone; egress.allow, when set, replaces it (one key, no duplicate)', async () => {
    expect(
      (await configMap({ settings: { CONVOY_EGRESS_ALLOW: 'git.internal' } }))['CONVOY_EGRESS_ALLOW'],
    ).toBe('git.internal');
    const both = await configMap({
      egress: { allow: ['10.1.0.0/16'] },
      settings: { CONVOY_EGRESS_ALLOW: 'git.internal' },
    });
    expect(both['CONVOY_EGRESS_ALLOW']).toBe('10.1.0.0/16');
  });

  it('values.schema.json refuses a string, an entry with a comma or a space, an unknown key', async () => {
    for (const egress of [
      { allow: '10.0.0.0/8' },
      { allow: ['10.0.0.0/8,10.1.0.0/16'] },
      { allow: ['a b'] },
      { deny: [] },
    ]) {
      await expect(template({ egress }), JSON.stringify(egress)).rejects.toThrow(
        /values don't meet the specifications of the schema/,
      );
    }
  });
});
