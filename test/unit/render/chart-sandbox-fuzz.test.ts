/**
 * Fuzz of the render sandbox: 240 seeded chart trees and archives
 * (chart-fuzz-cases.ts) with symbolic links (absolute, relative, chained, to folders, on templates,
 * Chart.yaml, values.yaml, in charts/ subcharts), hard links, FIFOs, loops, vendored archives with
 * link, absolute and `..` entries, and templates asking for outside paths — each rendered through
 * the real adapter (`render`, type Helm) with the real helm binary behind a counting wrapper.
 *
 * For every case: the content of the files outside the checkout (a random secret) never appears in
 * a render or an error message, raw or base64; a refused case is a RenderError naming one of the
 * files the attack planted, and helm never started for it; a case expected to render renders.
 */
import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { render, type RenderTools } from '../../../adapters/render/index.ts';
import { RenderError } from '../../../domain/render/errors.ts';
import {
  CHART_FUZZ_SEED,
  generateChartCases,
  outsideFiles,
  withOutside,
  type ChartFuzzCase,
  type FuzzTarEntry,
} from './chart-fuzz-cases.ts';
import { renderTools } from './render-tools.ts';
import { countingTool } from './sandbox-tools.ts';
import { tgzBytes, type TarFixtureEntry } from './tar-fixture.ts';

const CASES = 240;
const PARALLEL = 4;
const SECRET = `fuzz-secret-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;

let tools: RenderTools;
let base: string;
let outside: string;
let forbidden: string[];

beforeAll(async () => {
  tools = await renderTools();
  base = await mkdtemp(join(tmpdir(), 'convoy-chart-fuzz-'));
  outside = join(base, 'outside');
  const files = outsideFiles(SECRET);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(outside, path)), { recursive: true });
    await writeFile(join(outside, path), content);
  }
  // The secret as it would show: raw, and base64 of each outside file as .Files.Get | b64enc gives it.
  forbidden = [SECRET, ...Object.values(files).map((content) => Buffer.from(content).toString('base64'))];
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

function archiveEntries(entries: readonly FuzzTarEntry[]): TarFixtureEntry[] {
  return entries.map(({ tgz, ...entry }) => ({
    ...entry,
    ...(entry.linkName ? { linkName: withOutside(entry.linkName, outside) } : {}),
    ...(tgz ? { content: tgzBytes(archiveEntries(tgz)) } : {}),
  }));
}

async function writeCase(repo: string, c: ChartFuzzCase): Promise<void> {
  await mkdir(join(repo, c.chart), { recursive: true });
  for (const [path, node] of c.nodes) {
    const full = join(repo, path);
    await mkdir(dirname(full), { recursive: true });
    switch (node.kind) {
      case 'file':
        await writeFile(full, withOutside(node.content, outside));
        break;
      case 'symlink':
        await symlink(withOutside(node.target, outside), full);
        break;
      case 'hardlink-to-secret':
        await link(join(outside, 'secret.txt'), full);
        break;
      case 'fifo':
        execFileSync('mkfifo', [full]);
        break;
      case 'tgz':
        await writeFile(full, tgzBytes(archiveEntries(node.entries)));
        break;
    }
  }
}

interface Result {
  c: ChartFuzzCase;
  rendered?: string;
  error?: unknown;
  helmStarts: number;
}

async function runCase(c: ChartFuzzCase): Promise<Result> {
  const dir = join(base, 'cases', String(c.index));
  const repo = join(dir, 'repo');
  await mkdir(repo, { recursive: true });
  await writeCase(repo, c);
  const helm = await countingTool(dir, tools.helm);
  try {
    const objects = await render(
      {
        type: 'Helm',
        dir: join(repo, c.chart),
        root: repo,
        helm: { releaseName: 'fuzz', namespace: 'team-a', values: { inline: 'value' } },
        timeoutMs: 20_000,
      },
      { ...tools, helm: helm.path },
    );
    return { c, rendered: JSON.stringify(objects), helmStarts: await helm.starts() };
  } catch (error) {
    return { c, error, helmStarts: await helm.starts() };
  }
}

describe(`fuzz: ${CASES} generated chart trees and archives through the render sandbox (seed ${CHART_FUZZ_SEED})`, () => {
  it(
    'no outside content ever reaches a render or a message; refusals name the file and come before helm; legit charts render',
    { timeout: 120_000 },
    async () => {
      const cases = generateChartCases(CASES);
      const results: Result[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: PARALLEL }, async () => {
          while (next < cases.length) {
            const c = cases[next++];
            results.push(await runCase(c));
          }
        }),
      );

      const tally = { refused: 0, rendered: 0, helmStarts: 0 };
      for (const { c, rendered, error, helmStarts } of results) {
        const label = `case ${c.index} (${c.attack}; chart at "${c.chart}")`;
        tally.helmStarts += helmStarts;
        const message =
          error instanceof Error ? error.message : error === undefined ? '' : JSON.stringify(error);
        for (const secret of forbidden) {
          expect(rendered ?? '', `${label}: the render holds outside content`).not.toContain(secret);
          expect(message, `${label}: the message holds outside content`).not.toContain(secret);
        }
        expect(message, `${label}: the message names the outside folder`).not.toContain(outside);
        if (c.expect.verdict === 'refused') {
          expect(error, `${label}: expected a refusal, got a render`).toBeInstanceOf(RenderError);
          const file = (error as RenderError).file ?? '';
          expect(c.expect.files, `${label}: the refusal names ${file}: ${message}`).toContain(file);
          expect(message.startsWith(file), `${label}: ${message}`).toBe(true);
          expect(message, label).toMatch(c.expect.why);
          expect(helmStarts, `${label}: helm started for a refused case`).toBe(0);
          tally.refused += 1;
        } else {
          expect(error, `${label}: expected a render: ${message}`).toBeUndefined();
          expect(rendered, label).toContain('"name":"app-dump"');
          expect(helmStarts, label).toBe(1);
          tally.rendered += 1;
        }
      }
      expect(results).toHaveLength(CASES);
      // Both halves are exercised in earnest.
      expect(tally.refused).toBeGreaterThanOrEqual(120);
      expect(tally.rendered).toBeGreaterThanOrEqual(50);
      expect(tally.helmStarts).toBe(tally.rendered);
    },
  );
});
