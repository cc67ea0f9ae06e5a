# Sourced by scripts/build-{cosign,oci-registry,kubeconform}.sh: builds one Go command from the Go
# module proxy into a per-user, versioned cache folder outside the checkout
#   ${XDG_CACHE_HOME:-~/.cache}/convoy/tools/<name>-<version>/<name>
# and prints the binary's path on stdout (instant when it is already built; logs go to stderr).
#
#   build_go_tool <name> <go package path> <version> <version variable to name in errors>
#
# Needs `go` on PATH (or /usr/local/go/bin/go). Shipped in the npm package beside the scripts.

build_go_tool() {
  local name="$1" package="$2" version="$3" version_var="$4"
  local dest="${XDG_CACHE_HOME:-$HOME/.cache}/convoy/tools/${name}-${version}"
  local bin="$dest/$name"
  local tag="build-$name"
  if [ -x "$bin" ]; then
    echo "$tag: cached: $bin" >&2
    echo "$bin"
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    if [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; else
      echo "$tag: Go is needed to build $name: install Go (>= 1.24), then run this script again" >&2
      return 1
    fi
  fi
  local started gobin
  started=$(date +%s)
  mkdir -p "$dest"
  gobin="$(mktemp -d)"
  echo "$tag: building ${package}@${version}" >&2
  if ! GOBIN="$gobin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "${package}@${version}" >&2; then
    rm -rf "$gobin"
    echo "$tag: FAILED: go install ${package}@${version} (see the go error above; $(go version)); set $version_var to try another" >&2
    return 1
  fi
  mv "$gobin/$name" "$bin.tmp"
  mv "$bin.tmp" "$bin"
  rm -rf "$gobin"
  echo "$tag: built in $(( $(date +%s) - started )) s: $bin" >&2
  echo "$bin"
}
