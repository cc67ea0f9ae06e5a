// A read-mostly dashboard: one page that lists a namespace's Releases with the
// combined verdict and their conditions, and can request a sync. It calls the
// same HTTP API with the user's own Kubernetes token (kept in sessionStorage,
// never sent anywhere but this API), so it can do exactly what the token may.
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>convoy</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1b1f24; }
  h1 { font-size: 1.3rem; margin: 0 0 1rem; }
  form { display: flex; gap: .5rem; margin-bottom: 1rem; flex-wrap: wrap; }
  input { padding: .35rem .5rem; border: 1px solid #bbb; border-radius: 4px; }
  input[name=token] { width: 28rem; }
  button { padding: .35rem .8rem; border: 1px solid #888; border-radius: 4px; background: #f4f4f4; cursor: pointer; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
  .ready { color: #116329; font-weight: 600; } .wait { color: #8a6100; font-weight: 600; } .failure { color: #b42318; font-weight: 600; }
  .msg { color: #555; font-size: .9em; max-width: 26rem; overflow-wrap: anywhere; }
  #error { color: #b42318; margin: .5rem 0; }
</style>
</head>
<body>
<h1>convoy releases</h1>
<form id="form">
  <input name="namespace" placeholder="namespace" required>
  <input name="token" type="password" placeholder="bearer token (kubectl create token …)" required>
  <button type="submit">Show</button>
</form>
<div id="error" role="alert"></div>
<table>
  <thead><tr><th>Release</th><th>Verdict</th><th>Applied</th><th>InSync</th><th>Healthy</th><th>State</th><th></th></tr></thead>
  <tbody id="rows"></tbody>
</table>
<script>
const form = document.getElementById('form');
const rows = document.getElementById('rows');
const errorBox = document.getElementById('error');
form.namespace.value = sessionStorage.getItem('convoy.namespace') || '';
form.token.value = sessionStorage.getItem('convoy.token') || '';
const text = (value) => document.createTextNode(value == null ? '' : String(value));
function cell(...children) { const td = document.createElement('td'); for (const c of children) td.append(c); return td; }
function conditionCell(release, type) {
  const c = (release.status?.conditions || []).find((x) => x.type === type);
  if (!c) return cell(text('—'));
  const msg = document.createElement('div'); msg.className = 'msg'; msg.append(text(c.message));
  return cell(text(c.status + ' / ' + c.reason), msg);
}
async function call(method, path) {
  const res = await fetch(path, { method, headers: { Authorization: 'Bearer ' + form.token.value } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((body.error || res.status) + ': ' + (body.message || res.statusText));
  return body;
}
async function load() {
  errorBox.textContent = '';
  sessionStorage.setItem('convoy.namespace', form.namespace.value);
  sessionStorage.setItem('convoy.token', form.token.value);
  const ns = encodeURIComponent(form.namespace.value);
  try {
    const { releases } = await call('GET', '/v1/namespaces/' + ns + '/releases');
    rows.replaceChildren();
    for (const { release, verdict } of releases) {
      const tr = document.createElement('tr');
      const v = document.createElement('span');
      v.className = verdict.ready ? 'ready' : verdict.kind;
      v.textContent = verdict.ready ? 'Ready' : (verdict.kind === 'failure' ? 'Failed' : 'Waiting') + ' (' + verdict.signal + ')';
      const vm = document.createElement('div'); vm.className = 'msg'; vm.append(text(verdict.message));
      const sync = document.createElement('button');
      sync.textContent = 'Sync';
      sync.onclick = async () => {
        try { await call('POST', '/v1/namespaces/' + ns + '/releases/' + encodeURIComponent(release.metadata.name) + '/sync'); await load(); }
        catch (e) { errorBox.textContent = e.message; }
      };
      tr.append(cell(text(release.metadata.name)), cell(v, vm), conditionCell(release, 'Applied'), conditionCell(release, 'InSync'),
        conditionCell(release, 'Healthy'), cell(text(release.status?.rollout?.state || '')), cell(sync));
      rows.append(tr);
    }
  } catch (e) { errorBox.textContent = e.message; }
}
form.addEventListener('submit', (e) => { e.preventDefault(); void load(); });
if (form.namespace.value && form.token.value) void load();
</script>
</body>
</html>
`;
