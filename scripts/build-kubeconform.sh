#!/usr/bin/env bash
# Builds kubeconform (validates rendered manifests against JSON schemas; used by the chart tests,
# test/integration/chart.test.ts) from its Go module into the per-user tool cache
# (scripts/lib/go-tool.sh). Prints the binary's path. Honors CONVOY_KUBECONFORM when it names an
# executable.
set -euo pipefail
if [ -n "${CONVOY_KUBECONFORM:-}" ] && [ -x "$CONVOY_KUBECONFORM" ]; then
  echo "build-kubeconform: using CONVOY_KUBECONFORM=$CONVOY_KUBECONFORM" >&2
  echo "$CONVOY_KUBECONFORM"
  exit 0
fi
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"
build_go_tool kubeconform github.com/yannh/kubeconform/cmd/kubeconform "${CONVOY_KUBECONFORM_VERSION:-v0.8.0}" CONVOY_KUBECONFORM_VERSION
