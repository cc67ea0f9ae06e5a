/**
 * Serves the dashboard: one HTML shell and a few small ES modules, with a
 * strict Content Security Policy (scripts and styles from this origin only,
 * no inline code, calls only to this origin). The page holds no data: it
 * calls the HTTP API with the user's own token (kept in sessionStorage for
 * the browser session, sent only in the Authorization header, never in a URL).
 */
import type { Hono } from 'hono';
import type { ApiEnv } from '../api-common.ts';
import { API_JS, DOM_JS } from './assets-base.ts';
import { LIST_JS } from './assets-list.ts';
import { MAIN_JS, SIGNIN_JS } from './assets-main.ts';
import { RELEASE_JS } from './assets-release.ts';
import { RELEASE_SET_JS } from './assets-release-set.ts';
import { SECTIONS_JS } from './assets-sections.ts';
import { PAGE_HTML } from './page.ts';
import { STYLE_CSS } from './style.ts';

/**
 * The browser code, one file per concern in this folder, served as ONE classic script (an IIFE, in
 * dependency order): one request instead of a module waterfall, and no import statements in
 * these strings (image/prune-deps.ts reads import statements in the compiled files).
 */
const APP_JS = [
  '"use strict";',
  API_JS,
  DOM_JS,
  SIGNIN_JS,
  RELEASE_SET_JS,
  LIST_JS,
  SECTIONS_JS,
  RELEASE_JS,
  MAIN_JS,
].join('\n');

const ASSETS: Readonly<Record<string, { type: string; body: string }>> = {
  'style.css': { type: 'text/css; charset=utf-8', body: STYLE_CSS },
  'app.js': { type: 'text/javascript; charset=utf-8', body: `(() => {\n${APP_JS}\n})();\n` },
};

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

export function registerDashboard(app: Hono<ApiEnv>): void {
  app.get('/', (c) => c.redirect('/dashboard'));
  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.get('/dashboard', (c) => c.html(PAGE_HTML, 200, { ...SECURITY_HEADERS, 'Cache-Control': 'no-cache' }));
  app.get('/dashboard/assets/:file', (c) => {
    const asset = ASSETS[c.req.param('file')];
    if (asset === undefined)
      return c.json({ error: 'NotFound', message: `no dashboard asset ${c.req.param('file')}` }, 404);
    return c.body(asset.body, 200, {
      ...SECURITY_HEADERS,
      'Content-Type': asset.type,
      'Cache-Control': 'no-cache',
    });
  });
}
