#!/usr/bin/env bash
# Builds Flux's source-controller and kustomize-controller for the side-by-side bench
# (bench/sections/flux.ts) from the snapshots the session's `fetch` tool brought
# (/work/.mirror/fluxcd+<name>/repo, or FLUX_MIRROR_ROOT), at their released tags, into
# a per-user cache folder. Their source is exported from the snapshot into that cache
# folder (never into this repository) and built with Go; dependencies come from the Go
# module proxy. Prints the folder holding both binaries on stdout; logs go to stderr.
# Never part of `npm test`.
set -euo pipefail

SOURCE_TAG="${FLUX_SOURCE_CONTROLLER_TAG:-v1.9.1}"
KUSTOMIZE_TAG="${FLUX_KUSTOMIZE_CONTROLLER_TAG:-v1.9.4}"
MIRROR_ROOT="${FLUX_MIRROR_ROOT:-/work/.mirror}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/convoy/flux"
DEST="$CACHE/bin/source-${SOURCE_TAG}-kustomize-${KUSTOMIZE_TAG}"

log() { echo "build-flux: $*" >&2; }

if [ -x "$DEST/source-controller" ] && [ -x "$DEST/kustomize-controller" ]; then
  log "cached: $DEST"
  echo "$DEST"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then export PATH="/usr/local/go/bin:$PATH"; fi
mkdir -p "$DEST"

build() {
  local name="$1" tag="$2"
  local git_dir="$MIRROR_ROOT/fluxcd+${name}/repo"
  local src="$CACHE/src/${name}-${tag}"
  [ -d "$git_dir" ] || { log "no snapshot of fluxcd/${name} at $git_dir (fetch github:fluxcd/${name} first)"; exit 1; }
  if [ ! -f "$src/go.mod" ]; then
    rm -rf "$src" && mkdir -p "$src"
    git --git-dir="$git_dir" archive "$tag" | tar -x -C "$src"
  fi
  log "building $name $tag"
  local t=$(date +%s)
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$DEST/${name}.tmp" . >&2)
  mv "$DEST/${name}.tmp" "$DEST/${name}"
  log "built $name in $(( $(date +%s) - t )) s"
}

build source-controller "$SOURCE_TAG"
build kustomize-controller "$KUSTOMIZE_TAG"
echo "$DEST"
