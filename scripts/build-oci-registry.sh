#!/usr/bin/env bash
# Builds the OCI registry the OCI-source tests run against (distribution's `registry`, the
# reference implementation behind Docker Hub, GHCR-compatible APIs and Harbor) from Go modules
# into a per-user, versioned cache folder (outside the checkout, like build-control-plane.sh):
#   <cache>/registry
# Prints the binary's path on stdout; instant when it is already built. ~45 s cold on 2 cores.
set -euo pipefail

REGISTRY_VERSION="${CONVOY_REGISTRY_VERSION:-v3.1.2}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/convoy/tools"
DEST="$CACHE_ROOT/registry-${REGISTRY_VERSION}"
BIN="$DEST/registry"

log() { echo "build-oci-registry: $*" >&2; }

if [ -x "$BIN" ]; then
  log "cached: $BIN"
  echo "$BIN"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; else
    log "Go is needed to build the registry: install Go (>= 1.24), then run this script again"
    exit 1
  fi
fi

started=$(date +%s)
mkdir -p "$DEST"
gobin="$(mktemp -d)"
trap 'rm -rf "$gobin"' EXIT
log "building github.com/distribution/distribution/v3/cmd/registry@${REGISTRY_VERSION}"
GOBIN="$gobin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
  "github.com/distribution/distribution/v3/cmd/registry@${REGISTRY_VERSION}" >&2 ||
  { log "FAILED: go install registry@${REGISTRY_VERSION} (see the go error above); set CONVOY_REGISTRY_VERSION to try another"; exit 1; }
mv "$gobin/registry" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
log "built in $(( $(date +%s) - started )) s: $BIN"
echo "$BIN"
