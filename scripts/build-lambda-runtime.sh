#!/usr/bin/env bash
# Builds the Lambda runtime that `convoy dev --runtime lambda` and the function tests run the
# shipped bundles under, into a per-user, versioned cache folder (outside the checkout, like
# build-control-plane.sh):
#   <cache>/bin/aws-lambda-rie                  the Runtime Interface Emulator (Go module)
#   <cache>/node_modules/aws-lambda-ric/        the Node runtime interface client (npm, native addon)
# Prints the folder on stdout; instant when it is already built. Not a dependency of the
# repository: a plain `npm ci` needs no C toolchain. The RIC's install compiles curl and
# aws-lambda-cpp, which needs cmake, autoconf, automake and libtool besides g++ and make: as root
# with apt-get they are installed, otherwise one line says what to install.
set -euo pipefail

RIE_VERSION="${CONVOY_RIE_VERSION:-v0.0.0-20261030222936-bef5c4ba774d}"
RIC_VERSION="${CONVOY_RIC_VERSION:-4.0.2}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/convoy/lambda-runtime"
DEST="$CACHE_ROOT/rie-${RIE_VERSION}-ric-${RIC_VERSION}"
RIE="$DEST/bin/aws-lambda-rie"
RIC="$DEST/node_modules/aws-lambda-ric"

log() { echo "build-lambda-runtime: $*" >&2; }

built() { [ -x "$RIE" ] && [ -f "$RIC/index.mjs" ] && [ -f "$RIC/rapid-client.node" ]; }

if built; then
  log "cached: $DEST"
  echo "$DEST"
  exit 0
fi

started=$(date +%s)
mkdir -p "$DEST/bin"

# --- the emulator: Go module (only the pseudo-version is served), from the pinned module graph of
# the other Go tools (lib/go-tool.sh)
if [ ! -x "$RIE" ]; then
  source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"
  go_tools_install build-lambda-runtime "$DEST/bin" \
    "aws-lambda-rie=github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@${RIE_VERSION}" ||
    { log "FAILED: aws-lambda-rie ${RIE_VERSION} (see the error above)"; exit 1; }
fi

# --- the runtime interface client: npm, with a native addon built at install
if [ ! -f "$RIC/rapid-client.node" ]; then
  node_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  if [ "$node_major" -lt 22 ]; then
    log "aws-lambda-ric ${RIC_VERSION} needs Node.js >= 22 (found $(node --version 2>/dev/null || echo none)); source scripts/node-env.sh first"
    exit 1
  fi
  missing=()
  for tool in cmake autoconf automake libtoolize g++ make; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      log "installing the RIC's build tools (missing: ${missing[*]})"
      apt-get update -qq >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake autoconf automake libtool g++ make >&2
    else
      log "the RIC's native build needs ${missing[*]}: install the packages cmake autoconf automake libtool g++ make (Debian/Ubuntu: sudo apt-get install -y cmake autoconf automake libtool g++ make), then run this script again"
      exit 1
    fi
  fi
  log "installing aws-lambda-ric ${RIC_VERSION} (builds curl and aws-lambda-cpp, ~30-60 s)"
  work="$(mktemp -d)"
  echo '{"private":true}' >"$work/package.json"
  (cd "$work" && npm install --no-audit --no-fund --loglevel=error --no-save "aws-lambda-ric@${RIC_VERSION}" >&2) ||
    { log "FAILED: npm install aws-lambda-ric@${RIC_VERSION} (see the npm error above)"; rm -rf "$work"; exit 1; }
  rm -rf "$DEST/node_modules"
  mv "$work/node_modules" "$DEST/node_modules"
  rm -rf "$work"
fi

built || { log "FAILED: $DEST is incomplete after the build"; exit 1; }
log "built in $(( $(date +%s) - started ))s into $DEST ($(du -sh "$DEST" | cut -f1))"
echo "$DEST"
