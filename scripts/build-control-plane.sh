#!/usr/bin/env bash
# Builds the embedded cluster from Go modules into a per-user, versioned cache folder
# (outside the checkout, so a fresh clone on the same machine reuses it): etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler and KWOK (simulated nodes).
# Prints the folder on stdout. Honors KUBEBUILDER_ASSETS when it already holds all five.
set -euo pipefail

K8S_VERSION="${CONVOY_K8S_VERSION:-v1.34.4}"
ETCD_VERSION="${CONVOY_ETCD_VERSION:-v3.6.16}"
KWOK_VERSION="${CONVOY_KWOK_VERSION:-v0.8.0}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/convoy/control-plane"
DEST="$CACHE_ROOT/${K8S_VERSION}-${ETCD_VERSION}-kwok-${KWOK_VERSION}"
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

has_all() {
  local b
  for b in "${BINARIES[@]}"; do [ -x "$1/$b" ] || return 1; done
}

log() { echo "build-control-plane: $*" >&2; }

if [ -n "${KUBEBUILDER_ASSETS:-}" ] && has_all "$KUBEBUILDER_ASSETS"; then
  log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

if has_all "$DEST"; then
  log "cached: $DEST"
  echo "$DEST"
  exit 0
fi

source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"
if ! go_tools_need_go build-control-plane "the embedded cluster" 2>/dev/null; then
  cat >&2 <<MSG
build-control-plane: neither Go nor KUBEBUILDER_ASSETS is available.
  Either install Go (>= 1.26) so this script can build kube-apiserver ${K8S_VERSION}, etcd
  ${ETCD_VERSION} and KWOK ${KWOK_VERSION} from Go modules, or set KUBEBUILDER_ASSETS to a folder
  holding etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok.
MSG
  exit 1
fi

mkdir -p "$DEST"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
started=$(date +%s)

fail() {
  log "FAILED: $1"
  log "  module versions tried: k8s.io/kubernetes ${K8S_VERSION}, go.etcd.io/etcd/server/v3 ${ETCD_VERSION}"
  log "  go: $(go version)"
  log "  set CONVOY_K8S_VERSION / CONVOY_ETCD_VERSION to try others, or set KUBEBUILDER_ASSETS."
  exit 1
}

# --- kube-apiserver: a wrapper module replacing every staging module
build_apiserver() {
  local dir="$WORK/kube"
  mkdir -p "$dir"
  local modjson kdir
  modjson="$(go mod download -json "k8s.io/kubernetes@${K8S_VERSION}")" || fail "go mod download k8s.io/kubernetes@${K8S_VERSION}"
  kdir="$(printf '%s' "$modjson" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')"
  [ -n "$kdir" ] || fail "could not locate the k8s.io/kubernetes module folder"
  local staging_ver="v0.${K8S_VERSION#v1.}"
  local minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
  {
    echo "module local/kube-apiserver-build"
    echo
    echo "go 1.24.0"
    echo
    echo "godebug default=go1.24"
    echo
    echo "require k8s.io/kubernetes ${K8S_VERSION}"
    echo
    echo "replace ("
    grep -E '=> \./staging/' "$kdir/go.mod" | awk -v v="$staging_ver" '{print "\t" $1 " => " $1 " " v}'
    echo ")"
  } >"$dir/go.mod"
  cat >"$dir/tools.go" <<'SRC'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
SRC
  (cd "$dir" && go mod tidy >&2) || fail "go mod tidy of the kube wrapper module"
  local cmd missing=() stage
  for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
    [ -x "$DEST/$cmd" ] || missing+=("$cmd")
  done
  log "building ${missing[*]} ${K8S_VERSION}"
  stage="$WORK/kube-bin"
  mkdir -p "$stage"
  # One go build for the three: each package compiles once, and a command links while the next
  # one's packages still compile. The same -trimpath/-ldflags as the other Go tools (go-tool.sh).
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "$GO_TOOLS_LDFLAGS -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}" \
    -o "$stage/" "${missing[@]/#/k8s.io/kubernetes/cmd/}" >&2) || fail "${missing[*]} build (see the go error above)"
  for cmd in "${missing[@]}"; do mv "$stage/$cmd" "$DEST/$cmd"; done
}

# --- etcd and KWOK: from the pinned module graph of the other Go tools (lib/go-tool.sh), not the
# kube module (KWOK needs newer k8s.io/* modules than kube v1.34; etcd's gRPC and OpenTelemetry are
# then the versions the other tools share).
build_etcd_kwok() {
  go_tools_install build-control-plane "$DEST" "etcd=go.etcd.io/etcd/server/v3@${ETCD_VERSION}" "kwok=sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}" ||
    fail "etcd ${ETCD_VERSION} / kwok ${KWOK_VERSION} build (KWOK needs Go >= 1.26; see the go error above)"
}

# A previous cache folder (before the controllers were added) still holds a good etcd and apiserver.
for old in "$CACHE_ROOT/${K8S_VERSION}-${ETCD_VERSION}"; do
  for b in etcd kube-apiserver; do
    [ -x "$DEST/$b" ] || { [ -x "$old/$b" ] && cp "$old/$b" "$DEST/$b"; } || true
  done
done
# The kube binaries and etcd + KWOK share no module graph: built side by side, each fills the other's
# idle moments (module downloads, links, a long last package).
pids=()
if [ ! -x "$DEST/kube-apiserver" ] || [ ! -x "$DEST/kube-controller-manager" ] || [ ! -x "$DEST/kube-scheduler" ]; then
  build_apiserver &
  pids+=($!)
fi
if [ ! -x "$DEST/etcd" ] || [ ! -x "$DEST/kwok" ]; then
  build_etcd_kwok &
  pids+=($!)
fi
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ "$failed" = 0 ] || { log "FAILED: see the errors above"; exit 1; }
has_all "$DEST" || fail "$DEST is incomplete after the build"
log "built in $(( $(date +%s) - started ))s into $DEST: $(cd "$DEST" && du -sh "${BINARIES[@]}" | awk '{printf "%s %s, ", $2, $1}')"
echo "$DEST"
