/**
 * The dashboard's ReleaseSet views in real headless Chromium (Debian's chromium, puppeteer-core)
 * against the relay's HTTP API on a socket and the real apiserver, signed in with a tenant's token
 * (a ServiceAccount with a namespaced Role): the list's ReleaseSets table, the set page (steps,
 * counts, failing Clusters, held, children linked to their Release pages, Events), Approve, axe.
 *
 * The fleet function is being built in parallel: the set's status is written straight to /status
 * by the field manager that function uses (convoy-releaseset), its children and an Event as it
 * would write them (test/harness/release-set-fixture.ts).
 */
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP } from '../../domain/api/common.ts';
import type { ServedApi } from '../../relay/http/serve.ts';
import { axeViolations, launchChromium, seriousViolations } from '../harness/chromium.ts';
import { serveDashboard, serviceAccountUser, type ServiceAccountUser } from '../harness/dashboard.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi } from '../harness/releases.ts';
import { createWaitingSet, REVISION_B } from '../harness/release-set-fixture.ts';
import { clickNow } from '../harness/page-click.ts';

describe('the ReleaseSet page in headless Chromium', { timeout: 180_000 }, () => {
  const admin = kubeConfigFor(inject('kubeconfigPath'));
  let ns: FreshNamespace;
  let api: ServedApi;
  let browser: Browser;
  let page: Page;
  let user: ServiceAccountUser;
  const pageErrors: string[] = [];

  const js = <T>(expression: string) => page.evaluate(expression) as Promise<T>;
  const textOf = (selector: string): Promise<string> =>
    js<string>(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? ''`);
  const waitText = async (selector: string, pattern: RegExp, timeout = 30_000) => {
    try {
      await page.waitForFunction(
        `${pattern.toString()}.test(document.querySelector(${JSON.stringify(selector)})?.textContent ?? '')`,
        { timeout, polling: 200 },
      );
    } catch (error) {
      const seen = await textOf(selector).catch(() => '?');
      throw new Error(
        `${selector} did not match ${pattern} within ${timeout} ms: it shows ${JSON.stringify(seen.slice(0, 300))}; alert ${JSON.stringify(await textOf('[role=alert]').catch(() => '?'))}; page errors ${JSON.stringify(pageErrors)}`,
        { cause: error },
      );
    }
  };

  beforeAll(async () => {
    ns = await freshNamespace(admin, 'rset-dash');
    await createWaitingSet(admin, ns.name);
    user = await serviceAccountUser(admin, ns.name, 'rset-viewer', [
      {
        namespace: ns.name,
        rules: [
          { apiGroups: [API_GROUP], resources: ['releasesets'], verbs: ['get', 'list', 'update'] },
          { apiGroups: [API_GROUP], resources: ['releases'], verbs: ['get', 'list'] },
          { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['list'] },
        ],
      },
    ]);
    api = await serveDashboard(admin);
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    await page.setBypassCSP(true); // lets the test inject axe-core; the app itself loads only its own scripts
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await ns?.delete();
  });

  it('the list shows the set; its page shows steps, counts, failing Clusters, held and linked children; Approve writes the annotation; a child link opens its Release', async () => {
    await page.goto(`${api.url}/dashboard`);
    await page.waitForSelector('#token');
    await page.evaluate(`document.querySelector('#token').value = ${JSON.stringify(user.token)}`);
    await page.click('#signin button[type=submit]');
    await waitText(`[data-set="${ns.name}/web"]`, /WaitingForApproval/);
    expect(await textOf(`[data-set="${ns.name}/web"]`)).toMatch(/web.*WaitingForApproval.*eu1\/301$/);

    await clickNow(page, `[data-set="${ns.name}/web"] a`);
    await waitText('#set-verdict', /^WaitingForApproval revision bbbbbbbbbbbbbbbb/);
    expect(page.url()).toBe(`${api.url}/dashboard#/rs/${ns.name}/web`);
    expect(await textOf('#set-counts')).toBe('3 Clusters selected: 1 updated, 0 ready, 1 failed, 2 waiting');
    expect(await textOf('#steps-table [data-step="canary"]')).toMatch(/^canary1101Succeeded/);
    expect(await textOf('#steps-table [data-step="eu"]')).toBe('eu2000WaitingForApproval—');
    expect(await textOf('#failing-table [data-failing="canary-1"]')).toMatch(
      /^canary-1web-canary-1HealthyDegradedDeployment web\/web: 0\/3 replicas available/,
    );
    expect(await textOf('#held-table tbody')).toBe('eu-2web-eu-2PinnedByUser');
    const links = await js<string[]>(
      `[...document.querySelectorAll('#children-table tbody th a')].map((a) => a.getAttribute('href'))`,
    );
    expect(links).toEqual(['web-canary-1', 'web-eu-1', 'web-eu-2'].map((r) => `#/r/${ns.name}/${r}`));
    await waitText('#set-events-table', /StepStarted/);
    expect(await textOf('#set-approve')).toBe('Approve step eu');
    expect(seriousViolations(await axeViolations(page)), 'axe on the ReleaseSet page').toEqual([]);

    await clickNow(page, '#set-approve');
    await waitText(
      '#set-action-result',
      new RegExp(`^Approved: convoy\\.dev/approve=eu@${REVISION_B.id}\\.$`),
    );
    const set = (await convoyApi(admin).get('ReleaseSet', ns.name, 'web')) as {
      metadata: { annotations?: Record<string, string> };
    };
    expect(set.metadata.annotations?.['convoy.dev/approve']).toBe(`eu@${REVISION_B.id}`);

    await clickNow(page, `#children-table [data-child="web-canary-1"] a`);
    await waitText('h1', new RegExp(`^Release ${ns.name}/web-canary-1$`));
    expect(pageErrors).toEqual([]);
  });
});
