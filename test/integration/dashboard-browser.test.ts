/**
 * The dashboard in real headless Chromium (Debian's chromium, puppeteer-core) against the real
 * stack: the convoy dev runtime (relay, functions, fauxqs, Git server), the real apiserver and the
 * relay's HTTP API on a socket. The user is a ServiceAccount with namespaced Roles only, so the
 * all-namespaces view falls back to the namespaces it may list. Covers sign-in, the live list,
 * the Release page (tree, history, diff, Sync, Rollback, Events), axe-core, and bad input: a wrong
 * token, a revoked token, a Release deleted while open, 1000 Releases.
 */
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_GROUP } from '../../domain/api/common.ts';
import type { ServedApi } from '../../relay/http/serve.ts';
import { axeViolations, launchChromium, seriousViolations } from '../harness/chromium.ts';
import {
  createManyReleases,
  serveDashboard,
  serviceAccountUser,
  type ServiceAccountUser,
} from '../harness/dashboard.ts';
import { freshNamespace, kubeConfigFor, type FreshNamespace } from '../harness/kube.ts';
import { convoyApi, releaseSpec } from '../harness/releases.ts';
import { startRuntimeEnv, until, type RuntimeEnv } from '../harness/runtime-env.ts';
import { clickNow } from '../harness/page-click.ts';

const configMap = (value: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\ndata: {greeting: ${value}}\n`;
const MANY = 1000;
const reader = [{ apiGroups: [API_GROUP], resources: ['releases'], verbs: ['get', 'list'] }];

describe('the dashboard in headless Chromium', { timeout: 300_000 }, () => {
  const kubeconfig = inject('kubeconfigPath');
  const admin = kubeConfigFor(kubeconfig);
  let env: RuntimeEnv;
  let other: FreshNamespace;
  let big: FreshNamespace;
  let hidden: FreshNamespace;
  let api: ServedApi;
  let browser: Browser;
  let page: Page;
  let user: ServiceAccountUser;
  const pageErrors: string[] = [];

  const js = <T>(expression: string) => page.evaluate(expression) as Promise<T>;
  const waitFor = (expression: string, timeout = 30_000) =>
    page.waitForFunction(expression, { timeout, polling: 200 });
  const textOf = (selector: string): Promise<string> =>
    js<string>(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? ''`);
  const waitText = async (selector: string, pattern: RegExp, timeout = 30_000) => {
    try {
      await waitFor(
        `${pattern.toString()}.test(document.querySelector(${JSON.stringify(selector)})?.textContent ?? '')`,
        timeout,
      );
    } catch (error) {
      const seen = await textOf(selector).catch(() => '?');
      const alert = await textOf('[role=alert]').catch(() => '?');
      throw new Error(
        `${selector} did not match ${pattern} within ${timeout} ms: it shows ${JSON.stringify(seen.slice(0, 300))}; alert ${JSON.stringify(alert)}; page errors ${JSON.stringify(pageErrors)}`,
        { cause: error },
      );
    }
  };
  const rowCount = (selector: string) =>
    js<number>(`document.querySelectorAll(${JSON.stringify(selector)}).length`);
  const expectAccessible = async (where: string) => {
    expect(seriousViolations(await axeViolations(page)), `axe on ${where}`).toEqual([]);
  };

  beforeAll(async () => {
    env = await startRuntimeEnv(admin, 'dash', { relayTickMs: 200, visibilityTimeoutSeconds: 5 });
    [other, big, hidden] = await Promise.all([
      freshNamespace(admin, 'dash-other'),
      freshNamespace(admin, 'dash-big'),
      freshNamespace(admin, 'dash-hidden'),
    ]);
    const convoy = convoyApi(admin);
    await Promise.all([
      convoy.create('Release', other.name, 'elsewhere', releaseSpec()),
      convoy.create('Release', hidden.name, 'secret-app', releaseSpec()),
    ]);
    await createManyReleases(admin, big.name, MANY);
    user = await serviceAccountUser(admin, env.ns.name, 'dash-user', [
      {
        namespace: env.ns.name,
        rules: [
          { apiGroups: [API_GROUP], resources: ['releases'], verbs: ['get', 'list', 'update', 'patch'] },
          { apiGroups: [API_GROUP], resources: ['clusters'], verbs: ['get'] },
          { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['list'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'patch'] },
        ],
      },
      { namespace: other.name, rules: reader },
      { namespace: big.name, rules: reader },
    ]);
    api = await serveDashboard(admin, env.runtime);
    browser = await launchChromium();
    page = await browser.newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    await page.setBypassCSP(true); // lets the test inject axe-core; the app itself loads only its own scripts
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await env?.close();
    await Promise.all([other?.delete(), big?.delete(), hidden?.delete()]);
  });

  it('a wrong token is refused on the sign-in page with a clear message; the page is accessible', async () => {
    await page.goto(`${api.url}/dashboard`);
    await page.waitForSelector('#token');
    await expectAccessible('the sign-in page');
    await page.type('#token', 'not-a-valid-token');
    await page.click('#signin button[type=submit]');
    await waitText('#signin-message', /not valid for the cluster/);
    expect(await js<string | null>(`sessionStorage.getItem('convoy.token')`)).toBeNull();
  });

  it('signs in once per session (sessionStorage, never the URL) and lists every namespace the token may list; a Release goes Ready live', async () => {
    await page.evaluate(`document.querySelector('#token').value = ${JSON.stringify(user.token)}`);
    await page.click('#signin button[type=submit]');
    await waitText(
      '#summary',
      new RegExp(`^${MANY + 1} Releases in 2 namespaces \\(the namespaces your token may list\\)$`),
    );
    expect(await textOf('#who')).toContain(user.user);
    expect(page.url()).not.toContain(user.token);
    expect(await js<string>(`sessionStorage.getItem('convoy.token')`)).toBe(user.token);

    // Created after sign-in: its namespace and row appear, then it turns Ready, without a reload.
    const repo = await env.repo('app', { 'cm.yaml': configMap('hello') });
    await env.createRelease('app', { source: { git: { url: repo.url, ref: { branch: 'main' } } } });
    await waitText('#summary', new RegExp(`^${MANY + 2} Releases in 3 namespaces`));
    const namespaces = await js<string[]>(
      `[...document.querySelectorAll('#ns-filter option')].map((o) => o.value)`,
    );
    expect(namespaces).toEqual(['', ...[env.ns.name, other.name, big.name].sort()]);
    expect(namespaces).not.toContain(hidden.name);
    await page.select('#ns-filter', env.ns.name);
    await waitFor(`document.querySelector('[data-release="${env.ns.name}/app"]') !== null`);
    await waitText(`[data-release="${env.ns.name}/app"] .verdict`, /^Ready/, 90_000);
    await expectAccessible('the list');
  });

  it('1000 Releases: 50 rows a page, paging and the name filter work', async () => {
    await page.select('#ns-filter', big.name);
    await waitText('#page-info', new RegExp(`^Page 1 of ${MANY / 50} \\(${MANY} shown\\)$`));
    expect(await rowCount('#rows tr')).toBe(50);
    await clickNow(page, '#next-page');
    await waitText('#page-info', new RegExp(`^Page 2 of ${MANY / 50}`));
    expect(await textOf('#rows tr th')).toContain('r-0050');
    await page.type('#name-filter', `r-${String(MANY - 1).padStart(4, '0')}`);
    await waitText('#page-info', /^Page 1 of 1 \(1 shown\)$/);
    expect(await rowCount('#rows tr')).toBe(1);
  });

  it('the Release page shows the object tree with sync and health per object, the history and Events', async () => {
    await page.goto(`${api.url}/dashboard#/r/${env.ns.name}/app`);
    await waitText('#verdict', /^Ready/);
    await waitFor(`document.querySelector('#tree-table [data-object="ConfigMap/app-config"]') !== null`);
    const treeRow = await textOf('#tree-table [data-object="ConfigMap/app-config"]');
    expect(treeRow).toContain('Synced');
    expect(treeRow).toContain('Healthy');
    await waitFor(`document.querySelectorAll('#history-table tbody tr').length === 1`);
    expect(await textOf('#history-table tbody tr .role')).toBe('applied, healthy');
    await waitFor(`document.querySelector('#events-table') !== null`, 20_000);
    expect(await textOf('#events-table')).toContain('RenderApplied');
    await expectAccessible('the Release page');
  });

  it('Sync renders a new commit; the diff between the two renders shows the changed field', async () => {
    await env.commit('app', { 'cm.yaml': configMap('world') });
    await clickNow(page, '#sync');
    await waitText('#action-result', /^Sync requested at \d{4}-/);
    await waitFor(`document.querySelectorAll('#history-table tbody tr').length === 2`, 90_000);
    await waitText('#verdict', /^Ready/, 90_000);
    await clickNow(page, '#show-diff');
    await waitText('#diff', /1 changed/);
    const diff = await textOf('#diff');
    expect(diff).toContain('ConfigMap');
    expect(diff).toContain('-   greeting: hello');
    expect(diff).toContain('+   greeting: world');
  });

  it('Roll back to previous render pins the render applied before the current one, as convoy rollback does', async () => {
    const newer = await js<string>(
      `document.querySelectorAll('#history-table tbody tr')[0].getAttribute('data-render')`,
    );
    const older = await js<string>(
      `document.querySelectorAll('#history-table tbody tr')[1].getAttribute('data-render')`,
    );
    await waitFor(`document.querySelector('#rollback').disabled === false`);
    await clickNow(page, '#rollback');
    await waitText(
      '#action-result',
      new RegExp(
        `^Rolled back: pinned to render ${older.slice(7, 19)} \\(the render applied before ${newer.slice(7, 19)}\\)`,
      ),
    );
    expect((await env.getRelease('app')).metadata.annotations?.['convoy.dev/pin']).toBe(older);
    await waitFor(`document.querySelector('#pinned') !== null`);
    await clickNow(page, '#unpin');
    await waitText('#action-result', /^Unpinned/);
    await waitFor(`document.querySelector('#pinned') === null`);
  });

  it('Rollback pins the older render and convoy applies it again', async () => {
    const older = await js<string>(
      `document.querySelectorAll('#history-table tbody tr')[1].getAttribute('data-render')`,
    );
    await clickNow(page, `#history-table tbody tr[data-render="${older}"] .rollback-to`);
    await waitText('#action-result', new RegExp(`^Rolled back: pinned to render ${older.slice(7, 19)}`));
    await waitFor(`document.querySelector('#pinned') !== null`);
    expect((await env.getRelease('app')).metadata.annotations?.['convoy.dev/pin']).toBe(older);
    await until(
      'the pinned render is applied',
      async () => (await env.getRelease('app')).status?.lastSuccessful?.renderRef === older,
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    await waitText('#facts', new RegExp(`Applied render ${older.slice(7, 19)}`));
    await clickNow(page, '#unpin');
    await waitText('#action-result', /^Unpinned/);
  });

  it('a Release deleted while its page is open shows a clear "deleted" state', async () => {
    await env.createRelease('doomed', {
      source: { git: { url: 'https://git.example.invalid/x.git', ref: { branch: 'main' } } },
    });
    await page.goto(`${api.url}/dashboard#/r/${env.ns.name}/doomed`);
    await waitText('h1', /doomed/);
    // Loaded first (the facts line is drawn from the Release): a page that never saw it says "There is no Release".
    await waitText('#facts', /Applied render/);
    await env.deleteRelease('doomed');
    await waitText('#deleted', /This Release was deleted/);
    await expectAccessible('the deleted state');
  });

  it('a revoked token sends the user back to sign-in with a clear message', async () => {
    await page.goto(`${api.url}/dashboard#/`);
    await waitText('#summary', /Releases in/);
    await user.remove(); // the ServiceAccount is gone: TokenReview refuses its token from now on
    await waitText('#signin-message', /Your session has ended: the token is no longer valid/, 60_000);
    expect(await js<string | null>(`sessionStorage.getItem('convoy.token')`)).toBeNull();
    await expectAccessible('the sign-in page after the session ended');
    expect(pageErrors, 'uncaught errors in the page').toEqual([]);
  });
});
