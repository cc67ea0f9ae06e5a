#!/usr/bin/env bash
# Builds kubeconform (validates rendered manifests against JSON schemas; used by the chart tests,
# test/integration/chart.test.ts) from its Go module into a per-user, versioned cache folder
# outside the checkout, like scripts/build-control-plane.sh. Prints the binary's path on stdout.
# Honors CONVOY_KUBECONFORM when it names an executable.
set -euo pipefail

KUBECONFORM_VERSION="${CONVOY_KUBECONFORM_VERSION:-v0.8.0}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/convoy/tools"
DEST="$CACHE_ROOT/kubeconform-${KUBECONFORM_VERSION}"

log() { echo "build-kubeconform: $*" >&2; }

if [ -n "${CONVOY_KUBECONFORM:-}" ] && [ -x "$CONVOY_KUBECONFORM" ]; then
  log "using CONVOY_KUBECONFORM=$CONVOY_KUBECONFORM"
  echo "$CONVOY_KUBECONFORM"
  exit 0
fi
if [ -x "$DEST/kubeconform" ]; then
  log "cached: $DEST/kubeconform"
  echo "$DEST/kubeconform"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
  else
    log "Go is not installed: install Go (>= 1.24) so this script can build github.com/yannh/kubeconform ${KUBECONFORM_VERSION}, or set CONVOY_KUBECONFORM to a kubeconform binary"
    exit 1
  fi
fi

mkdir -p "$DEST"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
started=$(date +%s)
GOBIN="$WORK" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "github.com/yannh/kubeconform/cmd/kubeconform@${KUBECONFORM_VERSION}" >&2 || {
  log "FAILED: go install github.com/yannh/kubeconform/cmd/kubeconform@${KUBECONFORM_VERSION} (see the go error above); go: $(go version)"
  log "  set CONVOY_KUBECONFORM_VERSION to try another version, or CONVOY_KUBECONFORM to a binary"
  exit 1
}
mv "$WORK/kubeconform" "$DEST/kubeconform"
log "built in $(( $(date +%s) - started ))s: $DEST/kubeconform"
echo "$DEST/kubeconform"
