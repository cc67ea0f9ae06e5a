# Sourced by the scripts/build-*.sh that build Go commands from the Go module proxy into per-user,
# versioned cache folders outside the checkout (logs go to stderr).
#
# Every Go tool convoy builds but kube-apiserver, kube-controller-manager and kube-scheduler (etcd,
# KWOK, cosign, distribution's registry, kubeconform, the Lambda runtime emulator, crane) is built
# from ONE pinned module graph, scripts/lib/go-tools/go.mod + go.sum, with the same flags: a
# dependency they share (the k8s.io client libraries of KWOK and cosign, gRPC, OpenTelemetry, the
# cloud SDKs of cosign and the registry, ...) is then one package version, compiled once into the Go
# build cache and reused by the next script, instead of once per tool at each tool's own versions.
# A version other than the pinned one (the CONVOY_*_VERSION variables) is built from a copy of the
# graph with that version (`go get <package>@<version>`).
#
#   build_go_tool <name> <go package path> <version> <version variable to name in errors>
#     into ${XDG_CACHE_HOME:-~/.cache}/convoy/tools/<name>-<version>/<name>; prints the path.
#   go_tools_install <tag> <dir> <name>=<package>@<version> ...
#     every missing <dir>/<name>; the pinned ones in one `go build` (its packages compile in parallel).
#
# Needs `go` on PATH (or /usr/local/go/bin/go). Shipped in the npm package beside the scripts, with
# go-tools/.

GO_TOOLS_MODULE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/go-tools"
# One set of flags for every Go build of the scripts, so the build cache entries match.
GO_TOOLS_LDFLAGS="-s -w"

go_tools_need_go() { # go_tools_need_go <tag> <what>
  command -v go >/dev/null 2>&1 && return 0
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
    return 0
  fi
  echo "$1: Go is needed to build $2: install Go (>= 1.26), then run this script again" >&2
  return 1
}

# go_tools_module_of <package>: prints "<module> <version>" of the module go-tools/go.mod requires
# directly (its first require block) that provides the package.
go_tools_module_of() {
  [ -f "$GO_TOOLS_MODULE/go.mod" ] || return 0
  awk -v pkg="$1" '
    /^require \(/ { block++; inside = 1; next }
    inside && /^\)/ { inside = 0; next }
    inside && block == 1 && (pkg == $1 || index(pkg, $1 "/") == 1) && length($1) > best { best = length($1); found = $1 " " $2 }
    END { if (found != "") print found }
  ' "$GO_TOOLS_MODULE/go.mod"
}

# The file name `go build -o <dir>/` gives a command: its last path element, or the one before a
# major-version suffix (go.etcd.io/etcd/server/v3 -> server).
go_tools_binary_name() {
  local base="${1##*/}"
  if [[ "$base" =~ ^v[0-9]+$ ]]; then
    base="${1%/*}"
    base="${base##*/}"
  fi
  echo "$base"
}

# go_tools_build <out dir> <module dir> <package>...: one go build of the packages in the module.
go_tools_build() {
  local out="$1" module="$2"
  shift 2
  (cd "$module" && GOWORK=off CGO_ENABLED=0 go build -trimpath -ldflags "$GO_TOOLS_LDFLAGS" -o "$out/" "$@" >&2)
}

go_tools_install() {
  local tag="$1" dir="$2" spec name rest package version owner pass lock_fd
  shift 2
  local pinned_names=() pinned_packages=() other=()
  # Twice: after waiting for the lock, what another build (a test file beside this one, a second
  # terminal) finished meanwhile is not built again.
  for pass in first locked; do
    pinned_names=() pinned_packages=() other=()
    for spec in "$@"; do
      name="${spec%%=*}"
      rest="${spec#*=}"
      package="${rest%@*}"
      version="${rest##*@}"
      [ -x "$dir/$name" ] && continue
      owner="$(go_tools_module_of "$package")"
      if [ -n "$owner" ] && [ "${owner#* }" = "$version" ]; then
        pinned_names+=("$name")
        pinned_packages+=("$package")
      else
        other+=("$name=$package@$version")
      fi
    done
    [ ${#pinned_names[@]} -gt 0 ] || [ ${#other[@]} -gt 0 ] || return 0
    [ "$pass" = first ] || break
    command -v flock >/dev/null 2>&1 || break
    mkdir -p "$dir"
    exec {lock_fd}>"$dir/.build.lock"
    if ! flock -n "$lock_fd"; then
      echo "$tag: waiting for another build into $dir" >&2
      flock "$lock_fd"
    fi
  done
  go_tools_need_go "$tag" "${pinned_names[*]} ${other[*]}" || return 1
  mkdir -p "$dir"
  local stage i
  stage="$(mktemp -d)"
  if [ ${#pinned_names[@]} -gt 0 ]; then
    echo "$tag: building ${pinned_names[*]} from the pinned module graph (scripts/lib/go-tools)" >&2
    if ! go_tools_build "$stage/bin" "$GO_TOOLS_MODULE" "${pinned_packages[@]}"; then
      rm -rf "$stage"
      echo "$tag: FAILED: go build ${pinned_packages[*]} in $GO_TOOLS_MODULE (see the go error above; $(go version))" >&2
      return 1
    fi
    for i in "${!pinned_names[@]}"; do
      mv "$stage/bin/$(go_tools_binary_name "${pinned_packages[$i]}")" "$dir/${pinned_names[$i]}.tmp"
      mv "$dir/${pinned_names[$i]}.tmp" "$dir/${pinned_names[$i]}"
    done
  fi
  # Another version: a copy of the module graph with that version (go get), so that a module whose
  # go.mod has replace directives (etcd's) builds too, which `go install <package>@<version>` refuses.
  for spec in "${other[@]}"; do
    name="${spec%%=*}"
    rest="${spec#*=}"
    package="${rest%@*}"
    version="${rest##*@}"
    echo "$tag: building $name ${version} (not the pinned version: go get in a copy of scripts/lib/go-tools)" >&2
    rm -rf "$stage/module" "$stage/bin"
    cp -r "$GO_TOOLS_MODULE" "$stage/module"
    if ! (cd "$stage/module" && GOWORK=off go get "${package}@${version}" >&2) || ! go_tools_build "$stage/bin" "$stage/module" "$package"; then
      rm -rf "$stage"
      echo "$tag: FAILED: $name ${version} (see the go error above; $(go version))" >&2
      return 1
    fi
    mv "$stage/bin/$(go_tools_binary_name "$package")" "$dir/$name.tmp"
    mv "$dir/$name.tmp" "$dir/$name"
  done
  rm -rf "$stage"
  [ -z "${lock_fd:-}" ] || exec {lock_fd}>&-
}

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
  local started
  started=$(date +%s)
  if ! go_tools_install "$tag" "$dest" "$name=$package@$version"; then
    echo "$tag: set $version_var to try another version" >&2
    return 1
  fi
  echo "$tag: built in $(($(date +%s) - started)) s: $bin" >&2
  echo "$bin"
}
