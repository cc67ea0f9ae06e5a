#!/usr/bin/env bash
# Builds crane (go-containerregistry's registry client) from Go modules into the per-user tool cache
# (scripts/lib/go-tool.sh), where the packaging tests look for it (test/package/crane.ts: they build
# it themselves when it is missing, with go install, compiling what this build shares with cosign and
# the registry a second time). Prints the binary's path.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"
build_go_tool crane github.com/google/go-containerregistry/cmd/crane "${CONVOY_CRANE_VERSION:-v0.22.1}" CONVOY_CRANE_VERSION
