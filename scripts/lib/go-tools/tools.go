//go:build tools

// Package tools names the commands scripts/build-*.sh build from this module, so that
// `go mod tidy` keeps what they need.
package tools

import (
	_ "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"
	_ "github.com/distribution/distribution/v3/cmd/registry"
	_ "github.com/google/go-containerregistry/cmd/crane"
	_ "github.com/sigstore/cosign/v2/cmd/cosign"
	_ "github.com/yannh/kubeconform/cmd/kubeconform"
	_ "go.etcd.io/etcd/server/v3"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
