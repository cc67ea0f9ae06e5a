// Browser module release.js: one Release — verdict, actions (sync, force sync, rollback, unpin,
// suspend/resume), conditions — refreshed every 2 s; the tree, history/diff and Events are in sections.js.
// A 404 means the Release was deleted while open: the page says so and stops refreshing.

export const RELEASE_JS = String.raw`

const RELEASE_REFRESH_MS = 2000;

function showRelease(main, ns, name) {
  const title = ns + '/' + name;
  const state = { alive: true, busy: false, acting: false, release: undefined, timers: [] };
  const alert = h('p', { class: 'alert', role: 'alert', id: 'release-alert' });
  const result = h('p', { class: 'status', role: 'status', id: 'action-result' });
  const verdict = h('div', { id: 'verdict' }, 'Loading…');
  const facts = h('p', { id: 'facts', class: 'muted' });
  const conditions = h('div', { id: 'conditions' });
  const buttons = {
    sync: h('button', { type: 'button', id: 'sync', class: 'primary' }, 'Sync'),
    force: h('button', { type: 'button', id: 'force-sync' }, 'Force sync'),
    rollback: h('button', { type: 'button', id: 'rollback', title: 'Pin the render applied before the current one (as convoy rollback); the history table rolls back to any render' }, 'Roll back to previous render'),
    unpin: h('button', { type: 'button', id: 'unpin' }, 'Unpin'),
    suspend: h('button', { type: 'button', id: 'suspend' }, 'Suspend'),
    resume: h('button', { type: 'button', id: 'resume' }, 'Resume'),
  };
  const ctx = { ns, name, alive: () => state.alive, act, fail: (what, e) => { if (state.alive && e.status !== 401) alert.textContent = what + ': ' + e.message; } };
  const tree = treeSection(ctx);
  const history = historySection(ctx);
  const events = eventsSection(ctx);

  function deleted() {
    stop();
    main.replaceChildren(
      h('h1', {}, 'Release ' + title),
      h('p', { class: 'alert', role: 'alert', id: 'deleted' }, state.release
        ? 'This Release was deleted: it no longer exists in namespace ' + ns + '.'
        : 'There is no Release ' + name + ' in namespace ' + ns + '.'),
      h('p', {}, h('a', { href: '#/' }, 'Back to all Releases')));
  }

  async function act(label, method, rest, body, done) {
    state.acting = true;
    Object.values(buttons).forEach((b) => (b.disabled = true));
    result.textContent = label + '…';
    try {
      const { data } = await call(method, releasePath(ns, name, rest), { body });
      result.textContent = done(data);
      alert.textContent = '';
      await refresh();
      void tree.refresh();
      void history.refresh(state.release);
    } catch (e) {
      result.textContent = '';
      if (e.status === 404 && e.code === 'NotFound') deleted();
      else ctx.fail(label + ' failed', e);
    } finally {
      state.acting = false;
      Object.values(buttons).forEach((b) => (b.disabled = false));
      draw();
    }
  }

  function draw() {
    const r = state.release;
    if (!r) return;
    const rel = r.release;
    const pinned = (rel.metadata.annotations || {})['convoy.dev/pin'];
    const suspended = rel.spec.suspend === true;
    verdict.replaceChildren(verdictBadge(r.verdict), ' ', h('span', { class: 'msg' }, r.verdict.message));
    const s = rel.status || {};
    facts.replaceChildren(
      'Applied render ', h('code', {}, shortRef(s.lastSuccessful && s.lastSuccessful.renderRef)),
      ' · last healthy ', h('code', {}, shortRef(s.lastHealthy && s.lastHealthy.renderRef)),
      ' · rollout ', (s.rollout && s.rollout.state) || '—',
      pinned ? h('span', { id: 'pinned' }, ' · pinned to ', h('code', {}, shortRef(pinned))) : '',
      suspended ? h('span', { id: 'suspended' }, ' · suspended') : '');
    buttons.unpin.hidden = !pinned;
    buttons.suspend.hidden = suspended;
    buttons.resume.hidden = !suspended;
    buttons.rollback.disabled = state.acting || !(s.rollout && s.rollout.previousRenderRef);
    if (!(s.conditions || []).length) { conditions.replaceChildren(h('p', { class: 'muted' }, 'No conditions reported yet.')); return; }
    conditions.replaceChildren(table('Conditions as the loops reported them', ['Type', 'Status', 'Reason', 'Message', 'Since'],
      s.conditions.map((c) => h('tr', {}, h('th', { scope: 'row' }, c.type), h('td', {}, c.status), h('td', {}, c.reason),
        h('td', { class: 'msg' }, c.message), h('td', {}, when(c.lastTransitionTime)))), 'conditions-table'));
  }

  async function refresh() {
    if (!state.alive || state.busy) return;
    state.busy = true;
    try {
      const { data } = await call('GET', releasePath(ns, name));
      if (!state.alive) return;
      const changed = !state.release || JSON.stringify(state.release) !== JSON.stringify(data);
      state.release = data;
      if (changed) { draw(); history.mark(data); }
      alert.textContent = '';
    } catch (e) {
      if (e.status === 404 && e.code === 'NotFound') deleted();
      else ctx.fail('Could not load the Release', e);
    } finally {
      state.busy = false;
    }
  }

  buttons.sync.addEventListener('click', () => act('Sync', 'POST', '/sync', undefined, (d) => 'Sync requested at ' + d.value + '.'));
  buttons.force.addEventListener('click', () => act('Force sync', 'POST', '/sync?force=true', undefined, (d) => 'Force sync requested at ' + d.value + '.'));
  buttons.rollback.addEventListener('click', () => act('Rollback', 'POST', '/rollback', {}, (d) => 'Rolled back: pinned to render ' + shortRef(d.value) + ' (' + d.why + '); Unpin follows the source again.'));
  buttons.unpin.addEventListener('click', () => act('Unpin', 'DELETE', '/pin', undefined, () => 'Unpinned: the Release follows its source again.'));
  buttons.suspend.addEventListener('click', () => act('Suspend', 'POST', '/suspend', undefined, () => 'Suspended: convoy leaves the Release alone until resumed.'));
  buttons.resume.addEventListener('click', () => act('Resume', 'POST', '/resume', undefined, () => 'Resumed.'));

  function stop() { state.alive = false; state.timers.forEach(clearInterval); }

  main.replaceChildren(
    h('p', {}, h('a', { href: '#/' }, 'All Releases')),
    h('h1', {}, 'Release ' + title),
    alert, verdict, facts,
    h('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' }, Object.values(buttons)),
    result,
    h('h2', {}, 'Conditions'), conditions,
    tree.el, history.el, events.el);
  document.title = title + ' · convoy';
  void refresh().then(() => { void tree.refresh(); void history.refresh(state.release); void events.refresh(); });
  state.timers.push(setInterval(refresh, RELEASE_REFRESH_MS));
  state.timers.push(setInterval(() => { void history.refresh(state.release); void events.refresh(); }, 5000));
  state.timers.push(setInterval(() => tree.refresh(), 10000));
  return stop;
}
`;
