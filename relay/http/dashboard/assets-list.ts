// Browser module list.js: every Release the token may list, across namespaces, refreshed every 2 s
// (GET /v1/releases with If-None-Match: an unchanged list is a 304 without a body), 50 rows a page;
// the ReleaseSets the token may list above them (setsSection, assets-release-set.ts).

export const LIST_JS = String.raw`

const PAGE = 50;
const LIST_REFRESH_MS = 2000;

function showList(main) {
  const state = { alive: true, busy: false, etag: undefined, listing: undefined, page: 0, ns: '', text: '' };
  const sets = setsSection();
  const alert = h('p', { class: 'alert', role: 'alert' });
  const summary = h('p', { id: 'summary', class: 'muted' }, 'Loading Releases…');
  const updated = h('p', { id: 'updated', class: 'muted' });
  const nsSelect = h('select', { id: 'ns-filter' }, h('option', { value: '' }, 'All namespaces'));
  const text = h('input', { id: 'name-filter', type: 'search', placeholder: 'part of a name' });
  const body = h('tbody', { id: 'rows' });
  const pageInfo = h('span', { id: 'page-info', 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', id: 'prev-page' }, 'Previous page');
  const next = h('button', { type: 'button', id: 'next-page' }, 'Next page');
  const headers = ['Namespace', 'Release', 'Verdict', 'Applied', 'InSync', 'Healthy', 'Rollout'];
  const grid = h('table', { id: 'releases' },
    h('caption', {}, 'Releases, by namespace and name'),
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', { scope: 'col' }, x)))), body);

  function filtered() {
    const items = state.listing ? state.listing.items : [];
    return items.filter((r) => (!state.ns || r.namespace === state.ns) && (!state.text || r.name.includes(state.text)));
  }

  function row(r) {
    const link = h('a', { href: '#/r/' + encodeURIComponent(r.namespace) + '/' + encodeURIComponent(r.name) }, r.name);
    const flags = [r.suspended ? 'suspended' : '', r.pinned ? 'pinned to ' + shortRef(r.pinned) : ''].filter(Boolean).join(', ');
    return h('tr', { 'data-release': r.namespace + '/' + r.name },
      h('td', {}, r.namespace),
      h('th', { scope: 'row' }, link, flags ? h('div', { class: 'msg' }, flags) : ''),
      h('td', { class: 'verdict' }, verdictBadge(r.verdict), h('div', { class: 'msg' }, r.verdict.message)),
      h('td', {}, conditionText(r.conditions.Applied)),
      h('td', {}, conditionText(r.conditions.InSync)),
      h('td', {}, conditionText(r.conditions.Healthy)),
      h('td', {}, r.rollout || '—'));
  }

  function draw() {
    const listing = state.listing;
    if (!listing) return;
    const options = [''].concat(listing.namespaces);
    if (nsSelect.options.length !== options.length || options.some((o, i) => nsSelect.options[i].value !== o)) {
      nsSelect.replaceChildren(...options.map((o) => h('option', { value: o }, o || 'All namespaces')));
      nsSelect.value = listing.namespaces.includes(state.ns) ? state.ns : '';
    }
    const items = filtered();
    const pages = Math.max(1, Math.ceil(items.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    const scope = listing.scope === 'cluster' ? 'every namespace' : 'the namespaces your token may list';
    summary.textContent = listing.items.length + ' Releases in ' + listing.namespaces.length + ' namespaces (' + scope + ')';
    body.replaceChildren(...items.slice(state.page * PAGE, (state.page + 1) * PAGE).map(row));
    if (items.length === 0) body.append(h('tr', {}, h('td', { colspan: headers.length }, 'No Releases match.')));
    pageInfo.textContent = 'Page ' + (state.page + 1) + ' of ' + pages + ' (' + items.length + ' shown)';
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }

  async function refresh() {
    if (!state.alive || state.busy) return;
    state.busy = true;
    try {
      const res = await call('GET', '/v1/releases', { etag: state.etag });
      if (!state.alive) return;
      if (!res.notModified) { state.listing = res.data; state.etag = res.etag; draw(); }
      alert.textContent = '';
      updated.textContent = 'Live: updated ' + new Date().toLocaleTimeString();
    } catch (e) {
      if (state.alive && e.status !== 401) alert.textContent = 'Could not load Releases: ' + e.message;
    } finally {
      state.busy = false;
    }
  }

  nsSelect.addEventListener('change', () => { state.ns = nsSelect.value; state.page = 0; draw(); });
  text.addEventListener('input', () => { state.text = text.value.trim(); state.page = 0; draw(); });
  prev.addEventListener('click', () => { state.page--; draw(); });
  next.addEventListener('click', () => { state.page++; draw(); });

  main.replaceChildren(
    sets.el,
    h('h1', {}, 'Releases'), alert, summary,
    h('div', { class: 'controls' },
      h('div', {}, h('label', { for: 'ns-filter' }, 'Namespace'), nsSelect),
      h('div', {}, h('label', { for: 'name-filter' }, 'Name contains'), text)),
    grid,
    h('nav', { class: 'pager', 'aria-label': 'Pages of Releases' }, prev, pageInfo, next),
    updated);
  document.title = 'Releases · convoy';
  void refresh();
  void sets.refresh();
  const timer = setInterval(refresh, LIST_REFRESH_MS);
  const setsTimer = setInterval(sets.refresh, LIST_REFRESH_MS);
  return () => { state.alive = false; clearInterval(timer); clearInterval(setsTimer); };
}
`;
