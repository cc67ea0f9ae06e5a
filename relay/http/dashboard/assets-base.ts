// Browser code shared by every view: API_JS (the HTTP API with the session token) and DOM_JS (element helpers).
// Plain ES2022 in String.raw: no template literals inside, so the TypeScript string stays literal.

export const API_JS = String.raw`
const TOKEN = 'convoy.token';
const USER = 'convoy.user';

// The token lives in sessionStorage: one sign-in per browser session, gone when the tab closes,
// sent only in the Authorization header (never in a URL, so never in history or server logs).
const session = {
  token: () => sessionStorage.getItem(TOKEN),
  user: () => sessionStorage.getItem(USER),
  start(token, user) { sessionStorage.setItem(TOKEN, token); sessionStorage.setItem(USER, user); },
  end() { sessionStorage.removeItem(TOKEN); sessionStorage.removeItem(USER); },
};

class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : 'HTTP ' + status);
    this.status = status;
    this.code = (body && body.error) || '';
  }
}

const listeners = { unauthorized: () => {} };
/** Called once per 401: the token expired or was revoked. */
function onUnauthorized(fn) { listeners.unauthorized = fn; }

async function call(method, path, options) {
  const opts = options || {};
  const token = opts.token || session.token();
  const headers = { Authorization: 'Bearer ' + token, Accept: 'application/json' };
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  if (opts.etag) headers['If-None-Match'] = opts.etag;
  let res;
  try {
    res = await fetch(path, { method, headers, cache: 'no-store', body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  } catch (e) {
    throw new ApiError(0, { error: 'Unreachable', message: 'the convoy relay cannot be reached (' + e.message + '); retrying' });
  }
  if (res.status === 304) return { notModified: true, etag: opts.etag };
  const data = await res.json().catch(() => ({}));
  if (res.status === 401 && !opts.token) listeners.unauthorized(data.message);
  if (!res.ok) throw new ApiError(res.status, data);
  return { data, etag: res.headers.get('ETag') };
}

const releasePath = (ns, name, rest) =>
  '/v1/namespaces/' + encodeURIComponent(ns) + '/releases/' + encodeURIComponent(name) + (rest || '');
`;

export const DOM_JS = String.raw`
/** h('td', {class: 'x', onclick: fn}, 'text', child…): an element; strings become text nodes (never HTML). */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function verdictBadge(v) {
  if (!v) return h('span', { class: 'badge muted' }, 'Unknown');
  if (v.ready) return h('span', { class: 'badge ready' }, 'Ready');
  return h('span', { class: 'badge ' + v.kind }, (v.kind === 'failure' ? 'Failed' : 'Waiting') + ' (' + v.signal + ')');
}

const conditionText = (c) => (c ? c.status + ' · ' + c.reason : '—');
const shortRef = (ref) => (ref ? ref.replace(/^sha256:/, '').slice(0, 12) : '—');
const when = (t) => (t ? new Date(t).toLocaleString() : '—');

/** A table with a caption and column headers (scope=col). */
function table(caption, headers, rows, id) {
  return h('table', { id },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', {}, rows));
}
`;
