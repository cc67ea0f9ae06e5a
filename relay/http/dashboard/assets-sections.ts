// Browser module sections.js: the Release page's object tree, render history with a diff between
// any two renders (and a rollback to any of them), and Events.

export const SECTIONS_JS = String.raw`

const SYNC_CLASS = { Synced: 'ready', OutOfSync: 'failure', Missing: 'failure', Unknown: 'wait' };
const HEALTH_CLASS = { Healthy: 'ready', Progressing: 'wait', Degraded: 'failure', Missing: 'failure', Unknown: 'wait' };

function treeSection(ctx) {
  const box = h('div', { id: 'tree' }, h('p', { class: 'muted' }, 'Loading the objects…'));
  const again = h('button', { type: 'button', id: 'tree-refresh' }, 'Refresh objects');
  const el = h('section', { 'aria-labelledby': 'tree-h' }, h('h2', { id: 'tree-h' }, 'Objects'), again, box);
  const state = { busy: false };
  async function refresh() {
    if (!ctx.alive() || state.busy) return;
    state.busy = true;
    try {
      const { data } = await call('GET', releasePath(ctx.ns, ctx.name, '/tree'));
      if (!ctx.alive()) return;
      if (!data.renderRef) { box.replaceChildren(h('p', { class: 'muted' }, 'No render is applied yet.')); return; }
      box.replaceChildren(table('Objects of render ' + shortRef(data.renderRef) + ': sync (server-side dry run) and health',
        ['Kind', 'Namespace', 'Name', 'Sync', 'Health', 'Message'],
        data.objects.map((o) => h('tr', { 'data-object': o.kind + '/' + o.name },
          h('td', {}, o.kind), h('td', {}, o.namespace || '—'), h('th', { scope: 'row' }, o.name),
          h('td', { class: SYNC_CLASS[o.sync] || '' }, o.sync), h('td', { class: HEALTH_CLASS[o.health] || '' }, o.health),
          h('td', { class: 'msg' }, o.message))), 'tree-table'));
    } catch (e) {
      if (ctx.alive() && e.status !== 401) box.replaceChildren(h('p', { class: 'alert' }, 'Objects unavailable: ' + e.message));
    } finally {
      state.busy = false;
    }
  }
  again.addEventListener('click', refresh);
  return { el, refresh };
}

function rolesOf(release, ref) {
  const rel = release && release.release;
  if (!rel) return '';
  const s = rel.status || {};
  const roles = [];
  if (s.lastSuccessful && s.lastSuccessful.renderRef === ref) roles.push('applied');
  if (s.lastHealthy && s.lastHealthy.renderRef === ref) roles.push('healthy');
  if (s.lastAttempted && s.lastAttempted.renderRef === ref && !roles.includes('applied')) roles.push('attempted');
  if ((rel.metadata.annotations || {})['convoy.dev/pin'] === ref) roles.push('pinned');
  return roles.join(', ');
}

const revisionOf = (r) => {
  const s = r.resolvedSource || {};
  const oci = s.oci && s.oci.digest ? (s.oci.tag ? s.oci.tag + '@' : 'sha256:') + s.oci.digest.replace(/^sha256:/, '').slice(0, 12) : undefined;
  return (s.git && s.git.commit && s.git.commit.slice(0, 12)) || (s.helm && s.helm.version) || oci || '—';
};

function historySection(ctx) {
  const box = h('div', { id: 'history' }, h('p', { class: 'muted' }, 'Loading the renders…'));
  const showDiff = h('button', { type: 'button', id: 'show-diff' }, 'Show diff');
  const diff = h('div', { id: 'diff', 'aria-live': 'polite' });
  const el = h('section', { 'aria-labelledby': 'history-h' }, h('h2', { id: 'history-h' }, 'History'), box,
    h('div', { class: 'actions' }, showDiff), diff);
  const state = { renders: [], key: '', from: undefined, to: undefined, picked: false, release: undefined };

  function draw() {
    if (state.renders.length === 0) { box.replaceChildren(h('p', { class: 'muted' }, 'No stored renders yet.')); return; }
    const radio = (group, ref, i) => h('input', { type: 'radio', name: 'diff-' + group, value: ref, checked: state[group] === ref,
      'aria-label': 'Diff ' + group + ' render ' + (i + 1), onchange: () => { state[group] = ref; state.picked = true; } });
    box.replaceChildren(table('Renders, newest first', ['Stored', 'Revision', 'Render', 'Role', 'From', 'To', ''],
      state.renders.map((r, i) => h('tr', { 'data-render': r.renderRef },
        h('td', {}, when(r.createdAt)), h('td', {}, h('code', {}, revisionOf(r))),
        h('th', { scope: 'row' }, h('code', { title: r.renderRef }, shortRef(r.renderRef))),
        h('td', { class: 'role' }, rolesOf(state.release, r.renderRef)),
        h('td', {}, radio('from', r.renderRef, i)), h('td', {}, radio('to', r.renderRef, i)),
        h('td', {}, h('button', { type: 'button', class: 'rollback-to', 'aria-label': 'Roll back here: render ' + shortRef(r.renderRef),
          onclick: () => ctx.act('Rollback', 'POST', '/rollback', { renderRef: r.renderRef }, (d) => 'Rolled back: pinned to render ' + shortRef(d.value) + '.') },
          'Roll back here')))), 'history-table'));
  }

  async function refresh(release) {
    if (release) state.release = release;
    if (!ctx.alive()) return;
    try {
      const { data } = await call('GET', releasePath(ctx.ns, ctx.name, '/renders'));
      if (!ctx.alive()) return;
      const key = data.renders.map((r) => r.renderRef).join() + '|' + rolesOf(state.release, '');
      state.renders = data.renders;
      // Until the user picks, the diff compares the two newest renders.
      if (!state.picked) {
        state.to = data.renders[0] && data.renders[0].renderRef;
        state.from = data.renders[1] && data.renders[1].renderRef;
      }
      if (key !== state.key) { state.key = key; draw(); }
    } catch (e) {
      if (ctx.alive() && e.status !== 401 && e.status !== 404) box.replaceChildren(h('p', { class: 'alert' }, 'History unavailable: ' + e.message));
    }
  }

  showDiff.addEventListener('click', async () => {
    if (!state.from || !state.to) { diff.replaceChildren(h('p', { class: 'alert' }, 'Choose a From and a To render first.')); return; }
    diff.replaceChildren(h('p', { class: 'muted' }, 'Comparing…'));
    try {
      const q = '/renders/diff?from=' + encodeURIComponent(state.from) + '&to=' + encodeURIComponent(state.to);
      const { data } = await call('GET', releasePath(ctx.ns, ctx.name, q));
      const head = h('h3', {}, 'Diff ' + shortRef(data.from) + ' → ' + shortRef(data.to) + ': ' + data.objects.length + ' changed, ' + data.unchanged + ' unchanged');
      diff.replaceChildren(head, ...data.objects.map((o) => h('div', { class: 'diff-object' },
        h('h4', {}, o.kind + ' ' + (o.namespace ? o.namespace + '/' : '') + o.name + ' (' + o.change + ')'),
        h('pre', { class: 'diff' }, o.lines.map((l) => h('span', { class: l[0] === '+' ? 'add' : l[0] === '-' ? 'del' : '' }, l + '\n'))))));
    } catch (e) {
      if (e.status !== 401) diff.replaceChildren(h('p', { class: 'alert' }, 'Diff failed: ' + e.message));
    }
  });

  // The roles (applied, healthy, pinned) change with the Release, not with the renders.
  function mark(release) { state.release = release; state.key = ''; if (state.renders.length) { state.key = state.renders.map((r) => r.renderRef).join() + '|'; draw(); } }
  return { el, refresh, mark };
}

function eventsSection(ctx) {
  const box = h('div', { id: 'events' }, h('p', { class: 'muted' }, 'Loading the Events…'));
  const el = h('section', { 'aria-labelledby': 'events-h' }, h('h2', { id: 'events-h' }, 'Events'), box);
  const state = { key: '' };
  async function refresh() {
    if (!ctx.alive()) return;
    try {
      const { data } = await call('GET', releasePath(ctx.ns, ctx.name, '/events'));
      const key = JSON.stringify(data.events);
      if (!ctx.alive() || key === state.key) return;
      state.key = key;
      if (data.events.length === 0) { box.replaceChildren(h('p', { class: 'muted' }, 'No Events.')); return; }
      box.replaceChildren(table('Events, oldest first', ['Last seen', 'Type', 'Reason', 'From', 'Count', 'Message'],
        data.events.map((e) => h('tr', {}, h('td', {}, when(e.lastSeen)), h('td', { class: e.type === 'Warning' ? 'failure' : '' }, e.type),
          h('th', { scope: 'row' }, e.reason), h('td', {}, e.reportingController), h('td', {}, String(e.count)), h('td', { class: 'msg' }, e.note))), 'events-table'));
    } catch (e) {
      if (ctx.alive() && e.status !== 401 && e.status !== 404) box.replaceChildren(h('p', { class: 'alert' }, 'Events unavailable: ' + e.message));
    }
  }
  return { el, refresh };
}
`;
