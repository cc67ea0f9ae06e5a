// Headless Chromium for the dashboard's browser test and bench: Debian's `chromium` package (installed by
// .ci/run), driven by puppeteer-core, which never downloads a browser.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

export const CHROMIUM = process.env['CONVOY_CHROMIUM'] ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install -y chromium; .ci/run does) or set CONVOY_CHROMIUM`,
    );
  }
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // As root in a container Chromium needs --no-sandbox; /dev/shm is small there.
    args: [
      '--no-sandbox',
      '--headless=new',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--no-default-browser-check',
    ],
  });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * Runs axe-core in the page (injected from node_modules; the page must be opened with
 * setBypassCSP(true), since its policy allows only its own scripts) and returns the violations.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  const source = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.addScriptTag({ content: source });
  // A string, not a function: this project compiles without the DOM library.
  return page.evaluate(`(async () => {
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) }));
  })()`) as Promise<AxeViolation[]>;
}

/** The serious and critical violations, one line each (for an assertion message). */
export const seriousViolations = (violations: readonly AxeViolation[]): string[] =>
  violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact}: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
