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

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
  else
    cat >&2 <<MSG
build-control-plane: neither Go nor KUBEBUILDER_ASSETS is available.
  Either install Go (>= 1.24) so this script can build kube-apiserver ${K8S_VERSION}
  and etcd ${ETCD_VERSION} from Go modules, or set KUBEBUILDER_ASSETS to a folder
  holding 'etcd' and 'kube-apiserver' (for example from setup-envtest).
MSG
    exit 1
  fi
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

# --- etcd: its own wrapper module so its grpc/otel versions don't mix with kube's
build_etcd() {
  local dir="$WORK/etcd"
  mkdir -p "$dir"
  cat >"$dir/go.mod" <<MOD
module local/etcd-build

go 1.24.0
MOD
  cat >"$dir/tools.go" <<'SRC'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
SRC
  (cd "$dir" && go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" >&2 && go mod tidy >&2 &&
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$DEST/etcd.tmp" go.etcd.io/etcd/server/v3 >&2) ||
    fail "etcd build (see the go error above)"
  mv "$DEST/etcd.tmp" "$DEST/etcd"
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
  local cmd
  # Same -trimpath/-ldflags for all three, so the second and third reuse the first's GOCACHE.
  for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
    [ -x "$DEST/$cmd" ] && continue
    log "building $cmd ${K8S_VERSION}"
    (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor}" \
      -o "$DEST/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd" >&2) || fail "$cmd build (see the go error above)"
    mv "$DEST/$cmd.tmp" "$DEST/$cmd"
  done
}

# --- kwok: outside the kube module (it pins newer k8s.io/* modules); needs Go >= 1.26.
build_kwok() {
  local gobin="$WORK/kwok-bin"
  mkdir -p "$gobin"
  GOBIN="$gobin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}" >&2 ||
    fail "kwok ${KWOK_VERSION} build (needs Go >= 1.26; see the go error above)"
  mv "$gobin/kwok" "$DEST/kwok"
}

# A previous cache folder (before the controllers were added) still holds a good etcd and apiserver.
for old in "$CACHE_ROOT/${K8S_VERSION}-${ETCD_VERSION}"; do
  for b in etcd kube-apiserver; do
    [ -x "$DEST/$b" ] || { [ -x "$old/$b" ] && cp "$old/$b" "$DEST/$b"; } || true
  done
done
[ -x "$DEST/etcd" ] || { log "building etcd ${ETCD_VERSION}"; build_etcd; }
if [ ! -x "$DEST/kube-apiserver" ] || [ ! -x "$DEST/kube-controller-manager" ] || [ ! -x "$DEST/kube-scheduler" ]; then
  build_apiserver
fi
[ -x "$DEST/kwok" ] || { log "building kwok ${KWOK_VERSION}"; build_kwok; }
log "built in $(( $(date +%s) - started ))s into $DEST: $(cd "$DEST" && du -sh "${BINARIES[@]}" | awk '{printf "%s %s, ", $2, $1}')"
echo "$DEST"
