// Browser code for ReleaseSets: the list's ReleaseSets table (setsSection, above the
// Releases) and one set's page (showReleaseSet): verdict, rollout, actions (approve the waiting
// step, pause/resume, roll back), steps with counts, per-condition counts, failing Clusters, held
// children, every child linked to its Release page, Events. Refreshed every 2 s (Events 5 s).

export const RELEASE_SET_JS = String.raw`

const SET_REFRESH_MS = 2000;
const setPath = (ns, name, rest) =>
  '/v1/namespaces/' + encodeURIComponent(ns) + '/releasesets/' + encodeURIComponent(name) + (rest || '');
const setHref = (ns, name) => '#/rs/' + encodeURIComponent(ns) + '/' + encodeURIComponent(name);
const releaseHref = (ns, name) => '#/r/' + encodeURIComponent(ns) + '/' + encodeURIComponent(name);
const SET_CLASS = { ready: 'ready', wait: 'wait', held: 'wait', failure: 'failure' };

function setBadge(v) {
  return h('span', { class: 'badge ' + (SET_CLASS[v.kind] || '') }, v.word);
}

function setsSection() {
  const box = h('div', { id: 'sets' });
  const el = h('section', { 'aria-labelledby': 'sets-h', id: 'sets-section', hidden: true }, h('h2', { id: 'sets-h' }, 'ReleaseSets'), box);
  const state = { key: '' };
  async function refresh() {
    try {
      const { data } = await call('GET', '/v1/releasesets');
      const key = JSON.stringify(data.items);
      if (key === state.key) return;
      state.key = key;
      el.hidden = data.items.length === 0;
      box.replaceChildren(table('ReleaseSets, by namespace and name', ['Namespace', 'ReleaseSet', 'State', 'Step', 'Updated/Selected', 'Ready', 'Failed'],
        data.items.map((s) => h('tr', { 'data-set': s.namespace + '/' + s.name },
          h('td', {}, s.namespace),
          h('th', { scope: 'row' }, h('a', { href: setHref(s.namespace, s.name) }, s.name)),
          h('td', {}, setBadge(s.verdict), h('div', { class: 'msg' }, s.verdict.message)),
          h('td', {}, s.step || '—'),
          h('td', {}, s.clusters ? s.clusters.updated + '/' + s.clusters.selected : '—'),
          h('td', {}, s.clusters ? String(s.clusters.ready) : '—'),
          h('td', { class: s.clusters && s.clusters.failed > 0 ? 'failure' : '' }, s.clusters ? String(s.clusters.failed) : '—'))), 'sets-table'));
    } catch (e) {
      if (e.status !== 401) { el.hidden = false; box.replaceChildren(h('p', { class: 'alert' }, 'ReleaseSets unavailable: ' + e.message)); }
    }
  }
  return { el, refresh };
}

function showReleaseSet(main, ns, name) {
  const title = ns + '/' + name;
  const state = { alive: true, busy: false, acting: false, data: undefined, timers: [], eventsKey: '' };
  const alert = h('p', { class: 'alert', role: 'alert', id: 'set-alert' });
  const result = h('p', { class: 'status', role: 'status', id: 'set-action-result' });
  const verdict = h('div', { id: 'set-verdict' }, 'Loading…');
  const facts = h('p', { id: 'set-facts', class: 'muted' });
  const body = h('div', { id: 'set-body' });
  const events = h('div', { id: 'set-events' }, h('p', { class: 'muted' }, 'Loading the Events…'));
  const buttons = {
    approve: h('button', { type: 'button', id: 'set-approve', class: 'primary' }, 'Approve step'),
    pause: h('button', { type: 'button', id: 'set-pause' }, 'Pause'),
    resume: h('button', { type: 'button', id: 'set-resume' }, 'Resume'),
    rollback: h('button', { type: 'button', id: 'set-rollback', title: 'Every Cluster this revision updated goes back to the last revision that succeeded (as convoy rollback rset/<name>)' }, 'Roll back the fleet'),
  };

  function fail(what, e) { if (state.alive && e.status !== 401) alert.textContent = what + ': ' + e.message; }

  function deleted() {
    stop();
    main.replaceChildren(h('h1', {}, 'ReleaseSet ' + title),
      h('p', { class: 'alert', role: 'alert', id: 'set-deleted' }, 'There is no ReleaseSet ' + name + ' in namespace ' + ns + '.'),
      h('p', {}, h('a', { href: '#/' }, 'Back to the list')));
  }

  async function act(label, rest, payload, done) {
    state.acting = true;
    Object.values(buttons).forEach((b) => (b.disabled = true));
    result.textContent = label + '…';
    try {
      const { data } = await call('POST', setPath(ns, name, rest), { body: payload });
      result.textContent = done(data);
      alert.textContent = '';
      await refresh();
    } catch (e) {
      result.textContent = '';
      if (e.status === 404 && e.code === 'NotFound') deleted();
      else fail(label + ' failed', e);
    } finally {
      state.acting = false;
      Object.values(buttons).forEach((b) => (b.disabled = false));
      draw();
    }
  }

  function section(id, heading, content) {
    return h('section', { 'aria-labelledby': id + '-h' }, h('h2', { id: id + '-h' }, heading), content);
  }

  function draw() {
    const d = state.data;
    if (!d) return;
    const set = d.releaseSet;
    const s = set.status || {};
    const ro = s.rollout;
    const paused = !!(set.spec.rollout && set.spec.rollout.paused);
    verdict.replaceChildren(setBadge(d.verdict), ' ', h('span', { class: 'msg' }, d.verdict.message));
    facts.replaceChildren(
      'Revision ', h('code', {}, (s.revision && s.revision.id) || '—'),
      ' · last succeeded ', h('code', {}, (s.lastSucceededRevision && s.lastSucceededRevision.id) || '—'),
      ' · rollout ', ro ? ro.state + ' at step ' + ro.stepName : '—',
      paused ? h('span', { id: 'set-paused' }, ' · paused') : '');
    buttons.approve.hidden = !(ro && ro.state === 'WaitingForApproval');
    buttons.approve.textContent = ro ? 'Approve step ' + ro.stepName : 'Approve step';
    buttons.pause.hidden = paused;
    buttons.resume.hidden = !paused;
    buttons.rollback.disabled = state.acting || !(s.lastSucceededRevision && s.revision && s.lastSucceededRevision.id !== s.revision.id && ro && ro.state !== 'RolledBack');
    const c = s.clusters;
    const parts = [
      h('p', { id: 'set-counts' }, c ? c.selected + ' Clusters selected: ' + c.updated + ' updated, ' + c.ready + ' ready, ' + c.failed + ' failed, ' + c.waiting + ' waiting' : 'No counts reported yet.'),
      section('set-steps', 'Steps', (s.steps || []).length === 0 ? h('p', { class: 'muted' }, 'No steps reported yet.') :
        table('Steps in order, with their Clusters', ['Step', 'Clusters', 'Updated', 'Ready', 'Failed', 'State', 'Finished'],
          s.steps.map((st) => h('tr', { 'data-step': st.name, class: ro && ro.stepName === st.name ? 'current' : '' },
            h('th', { scope: 'row' }, st.name), h('td', {}, String(st.clusters)), h('td', {}, String(st.updated)), h('td', {}, String(st.ready)),
            h('td', { class: st.failed > 0 ? 'failure' : '' }, String(st.failed)),
            h('td', { class: st.state === 'Failed' ? 'failure' : st.state === 'Succeeded' ? 'ready' : 'wait' }, st.state), h('td', {}, when(st.finishedAt)))), 'steps-table')),
      section('set-conditions', 'Conditions', table('Conditions of the set', ['Type', 'Status', 'Reason', 'Message'],
        (s.conditions || []).map((x) => h('tr', {}, h('th', { scope: 'row' }, x.type), h('td', {}, x.status), h('td', {}, x.reason), h('td', { class: 'msg' }, x.message))), 'set-conditions-table')),
      s.releaseConditions ? section('set-child-conditions', 'Child Release conditions', table('How many children have each condition True, False or Unknown', ['Condition', 'True', 'False', 'Unknown'],
        Object.entries(s.releaseConditions).map(([t, n]) => h('tr', {}, h('th', { scope: 'row' }, t), h('td', {}, String(n.True)), h('td', {}, String(n.False)), h('td', {}, String(n.Unknown)))), 'child-conditions-table')) : '',
      section('set-failing', 'Failing Clusters', (s.failing || []).length === 0 ? h('p', { class: 'muted', id: 'no-failing' }, 'No failing Clusters.') :
        h('div', {}, table('Failing Clusters, in step order', ['Cluster', 'Release', 'Signal', 'Reason', 'Message', 'Since'],
          s.failing.map((f) => h('tr', { 'data-failing': f.cluster },
            h('th', { scope: 'row' }, f.cluster), h('td', {}, h('a', { href: releaseHref(ns, f.release) }, f.release)),
            h('td', {}, f.signal), h('td', { class: 'failure' }, f.reason), h('td', { class: 'msg' }, f.message), h('td', {}, when(f.since)))), 'failing-table'),
          s.failingOmitted ? h('p', { class: 'muted' }, '…and ' + s.failingOmitted + ' more') : '')),
      (s.held || []).length === 0 ? '' : section('set-held', 'Held by their users', table('Children their users pinned or suspended: the set does not update them', ['Cluster', 'Release', 'Reason'],
        s.held.map((x) => h('tr', {}, h('th', { scope: 'row' }, x.cluster), h('td', {}, h('a', { href: releaseHref(ns, x.release) }, x.release)), h('td', {}, x.reason))), 'held-table')),
      section('set-children', 'Child Releases', d.children === null ? h('p', { class: 'muted' }, d.childrenMessage || 'The child Releases cannot be listed.') :
        d.children.length === 0 ? h('p', { class: 'muted' }, 'No child Releases yet.') :
        table('One Release per Cluster', ['Release', 'Cluster', 'Revision', 'Verdict'],
          d.children.map((r) => h('tr', { 'data-child': r.name },
            h('th', { scope: 'row' }, h('a', { href: releaseHref(ns, r.name) }, r.name)), h('td', {}, r.cluster), h('td', {}, h('code', {}, r.revision || '—')),
            h('td', {}, verdictBadge(r.verdict), h('div', { class: 'msg' }, r.verdict.message)))), 'children-table')),
    ];
    body.replaceChildren(...parts);
  }

  async function refresh() {
    if (!state.alive || state.busy) return;
    state.busy = true;
    try {
      const { data } = await call('GET', setPath(ns, name));
      if (!state.alive) return;
      const changed = !state.data || JSON.stringify(state.data) !== JSON.stringify(data);
      state.data = data;
      if (changed) draw();
      alert.textContent = '';
    } catch (e) {
      if (e.status === 404 && e.code === 'NotFound') deleted();
      else fail('Could not load the ReleaseSet', e);
    } finally {
      state.busy = false;
    }
  }

  async function refreshEvents() {
    if (!state.alive) return;
    try {
      const { data } = await call('GET', setPath(ns, name, '/events'));
      const key = JSON.stringify(data.events);
      if (!state.alive || key === state.eventsKey) return;
      state.eventsKey = key;
      if (data.events.length === 0) { events.replaceChildren(h('p', { class: 'muted' }, 'No Events.')); return; }
      events.replaceChildren(table('Events about the set (step transitions), oldest first', ['Last seen', 'Type', 'Reason', 'From', 'Count', 'Message'],
        data.events.map((e) => h('tr', {}, h('td', {}, when(e.lastSeen)), h('td', { class: e.type === 'Warning' ? 'failure' : '' }, e.type),
          h('th', { scope: 'row' }, e.reason), h('td', {}, e.reportingController), h('td', {}, String(e.count)), h('td', { class: 'msg' }, e.note))), 'set-events-table'));
    } catch (e) {
      if (state.alive && e.status !== 401 && e.status !== 404) events.replaceChildren(h('p', { class: 'alert' }, 'Events unavailable: ' + e.message));
    }
  }

  buttons.approve.addEventListener('click', () => act('Approve', '/approve', {}, (d) => 'Approved: ' + d.annotation + '=' + d.value + '.'));
  buttons.pause.addEventListener('click', () => act('Pause', '/pause', undefined, () => 'Paused: nothing of the set is written until resumed.'));
  buttons.resume.addEventListener('click', () => act('Resume', '/resume', undefined, () => 'Resumed.'));
  buttons.rollback.addEventListener('click', () => act('Rollback', '/rollback', undefined, (d) => 'Rollback of revision ' + d.value + ' to ' + d.to + ' requested.'));

  function stop() { state.alive = false; state.timers.forEach(clearInterval); }

  main.replaceChildren(
    h('p', {}, h('a', { href: '#/' }, 'All Releases and ReleaseSets')),
    h('h1', {}, 'ReleaseSet ' + title),
    alert, verdict, facts,
    h('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' }, Object.values(buttons)),
    result, body,
    section('set-events-s', 'Events', events));
  document.title = title + ' · ReleaseSet · convoy';
  void refresh().then(refreshEvents);
  state.timers.push(setInterval(refresh, SET_REFRESH_MS));
  state.timers.push(setInterval(refreshEvents, 5000));
  return stop;
}
`;
