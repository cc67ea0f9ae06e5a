// Browser code: the router and the header (MAIN_JS), the sign-in form (SIGNIN_JS); served in app.js (routes.ts).

export const MAIN_JS = String.raw`

const main = document.getElementById('main');
const who = document.getElementById('who');
const signout = document.getElementById('signout');
const current = { stop: () => {}, notice: '' };

function header() {
  const user = session.user();
  who.replaceChildren(user ? h('span', {}, 'Signed in as ', h('strong', {}, user)) : '');
  signout.hidden = !user;
}

// Views: #/ the list, #/r/<namespace>/<name> a Release, #/rs/<namespace>/<name> a ReleaseSet. Each view returns its stop function.
function route() {
  current.stop();
  current.stop = () => {};
  header();
  if (!session.token()) {
    current.stop = showSignIn(main, current.notice, () => { current.notice = ''; route(); });
    return;
  }
  const m = /^#\/(r|rs)\/([^/]+)\/([^/]+)$/.exec(location.hash);
  const view = !m ? undefined : m[1] === 'rs' ? showReleaseSet : showRelease;
  current.stop = view ? view(main, decodeURIComponent(m[2]), decodeURIComponent(m[3])) : showList(main);
}

onUnauthorized((message) => {
  if (!session.token()) return;
  session.end();
  current.notice = 'Your session has ended: the token is no longer valid (expired or revoked). Sign in again. ' + (message ? '(' + message + ')' : '');
  route();
});
signout.addEventListener('click', () => { session.end(); current.notice = 'Signed out.'; route(); });
window.addEventListener('hashchange', route);
route();
`;

export const SIGNIN_JS = String.raw`

function showSignIn(main, notice, done) {
  const alert = h('p', { class: 'alert', role: 'alert', id: 'signin-message' }, notice || '');
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, 'aria-describedby': 'token-help' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h('form', { class: 'signin', id: 'signin' },
    h('label', { for: 'token' }, 'Kubernetes bearer token'),
    input,
    h('p', { id: 'token-help', class: 'muted' },
      'For example from kubectl create token <serviceaccount>. It is kept for this browser session only and sent only to this relay, which checks it with the cluster; you can do exactly what its RBAC allows.'),
    h('div', {}, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    submit.disabled = true;
    alert.textContent = '';
    try {
      const { data } = await call('GET', '/v1/whoami', { token });
      session.start(token, data.user);
      done();
    } catch (err) {
      alert.textContent = err.status === 401 ? 'This token is not valid for the cluster (expired, revoked or mistyped).' : 'Sign-in failed: ' + err.message;
      submit.disabled = false;
      input.focus();
    }
  });
  main.replaceChildren(h('h1', {}, 'Sign in to convoy'), alert, form);
  document.title = 'Sign in · convoy';
  input.focus();
  return () => {};
}
`;
