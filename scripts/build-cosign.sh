#!/usr/bin/env bash
# Builds cosign (sigstore's signing tool) from Go modules into a per-user, versioned cache folder
# (outside the checkout, like build-oci-registry.sh):
#   <cache>/cosign
# The OCI verification tests (test/integration/oci-auth.test.ts) sign artifacts with it
# (`cosign generate-key-pair`, `cosign sign --key … --tlog-upload=false`), so convoy's verifier is
# checked against signatures the real tool wrote. Prints the binary's path on stdout; instant when
# it is already built.
set -euo pipefail

COSIGN_VERSION="${CONVOY_COSIGN_VERSION:-v2.6.5}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/convoy/tools"
DEST="$CACHE_ROOT/cosign-${COSIGN_VERSION}"
BIN="$DEST/cosign"

log() { echo "build-cosign: $*" >&2; }

if [ -x "$BIN" ]; then
  log "cached: $BIN"
  echo "$BIN"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; else
    log "Go is needed to build cosign: install Go (>= 1.24), then run this script again"
    exit 1
  fi
fi

started=$(date +%s)
mkdir -p "$DEST"
gobin="$(mktemp -d)"
trap 'rm -rf "$gobin"' EXIT
log "building github.com/sigstore/cosign/v2/cmd/cosign@${COSIGN_VERSION}"
GOBIN="$gobin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
  "github.com/sigstore/cosign/v2/cmd/cosign@${COSIGN_VERSION}" >&2 ||
  { log "FAILED: go install cosign@${COSIGN_VERSION} (see the go error above); set CONVOY_COSIGN_VERSION to try another"; exit 1; }
mv "$gobin/cosign" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
log "built in $(( $(date +%s) - started )) s: $BIN"
echo "$BIN"
