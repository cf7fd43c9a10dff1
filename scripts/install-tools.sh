#!/usr/bin/env bash
# Installs helm and goreleaser at the versions given (make tools passes the
# pins from the Makefile) with `go install`, into $(go env GOPATH)/bin or
# $GOBIN; a binary already built from that exact module version is kept,
# since building them takes minutes.
#
#   scripts/install-tools.sh HELM_VERSION GORELEASER_VERSION
set -euo pipefail
helm_version=${1:?helm version}
goreleaser_version=${2:?goreleaser version}
bin=$(go env GOBIN)
[ -n "$bin" ] || bin=$(go env GOPATH)/bin

# install PACKAGE MODULE VERSION BINARY
install() {
  local pkg=$1 mod=$2 version=$3 name=$4
  if [ -x "$bin/$name" ] && go version -m "$bin/$name" 2>/dev/null | awk '$1 == "mod" { print $2, $3 }' | grep -qxF "$mod $version"; then
    echo "tools: $name $version already in $bin"
    return
  fi
  echo "tools: go install $pkg@$version"
  go install "$pkg@$version"
}

install helm.sh/helm/v3/cmd/helm helm.sh/helm/v3 "$helm_version" helm
install github.com/goreleaser/goreleaser/v2 github.com/goreleaser/goreleaser/v2 "$goreleaser_version" goreleaser
