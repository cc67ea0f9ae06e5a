#!/usr/bin/env bash
# Builds cosign (sigstore's signing tool) from Go modules into the per-user tool cache
# (scripts/lib/go-tool.sh). The OCI verification tests (test/integration/oci-auth.test.ts) sign
# artifacts with it (`cosign generate-key-pair`, `cosign sign --key … --tlog-upload=false`), so
# convoy's verifier is checked against signatures the real tool wrote. Prints the binary's path.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/go-tool.sh"
build_go_tool cosign github.com/sigstore/cosign/v2/cmd/cosign "${CONVOY_COSIGN_VERSION:-v2.6.5}" CONVOY_COSIGN_VERSION
