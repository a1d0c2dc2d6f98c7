#!/bin/sh
# Reproduces the attempt to build the OpenShift fork of karpenter-provider-azure (pull request 6 at
# 8e5b2e51) from the Go module proxy, as test/upstream builds karpenter-provider-aws (issue 44,
# point 8). See test/upstream/karpenter-provider-azure-openshift/README.md.
#
#   scripts/try-azure-fork.sh                 the module proxy attempt (answers 403 here)
#   scripts/try-azure-fork.sh <fork checkout>  also builds cmd/controller from that checkout's own
#                                              vendor/ directory, timed (needs no proxy)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
export PATH="/usr/local/go/bin:$PATH" GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off GOFLAGS=-modcacherw
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp "$here/test/upstream/karpenter-provider-azure-openshift/go.mod.attempt" "$scratch/go.mod"
echo "== go mod download (module proxy: $(go env GOPROXY))"
if (cd "$scratch" && go mod download github.com/Azure/karpenter-provider-azure); then
  echo "the proxy served the fork: build it with (cd $scratch && go mod tidy && go build -o karpenter-provider-azure-openshift github.com/Azure/karpenter-provider-azure/cmd/controller)"
else
  echo "refused by the module proxy (see above)"
fi
if [ $# -ge 1 ]; then
  checkout=$(cd "$1" && pwd)
  git -C "$checkout" rev-parse HEAD 2>/dev/null || true
  out="${XDG_CACHE_HOME:-$HOME/.cache}/karpenter-fleet/upstream-bin/karpenter-provider-azure-openshift-8e5b2e51"
  mkdir -p "$out"
  echo "== go build -mod=vendor ./cmd/controller in $checkout"
  start=$(date +%s)
  (cd "$checkout" && nice -n 15 go build -mod=vendor -p 2 -trimpath -o "$out/karpenter-provider-azure-openshift.tmp" ./cmd/controller)
  mv "$out/karpenter-provider-azure-openshift.tmp" "$out/karpenter-provider-azure-openshift"
  echo "built in $(($(date +%s) - start)) s: $out/karpenter-provider-azure-openshift"
  echo "run it against a real kube-apiserver and the ARM emulator:"
  echo "  AZURE_FORK_BINARY=$out/karpenter-provider-azure-openshift node --experimental-vm-modules node_modules/jest/bin/jest.js --selectProjects real-kubernetes --testPathPatterns test/real-kubernetes/azure-fork"
fi
