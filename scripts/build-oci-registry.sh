#!/usr/bin/env bash
# Builds the OCI registry that `convoy dev --oci-port` and the OCI-source tests run (distribution's
# `registry`, the reference implementation behind Docker Hub, GHCR-compatible APIs and Harbor) from
# Go modules into the per-user tool cache (scripts/lib/go-tool.sh). Prints the binary's path;
# instant when it is already built. Cold, the largest Go tool after cosign (its storage drivers bring
# the AWS, Azure and Google SDKs, partly shared with cosign through the one module graph).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"
build_go_tool registry github.com/distribution/distribution/v3/cmd/registry "${CONVOY_REGISTRY_VERSION:-v3.1.2}" CONVOY_REGISTRY_VERSION
