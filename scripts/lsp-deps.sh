#!/usr/bin/env bash
# Builds the gopls the language-server tests pin (blackbox/lsp_test.go's
# goplsVersion) from the Go module proxy into the user cache directory,
# where the tests look for it — not into go.mod, whose go.sum stays small.
# Nothing is built when it is there already. (clangd, pylsp and pyflakes
# are Debian packages: scripts/deps.sh.)
set -euo pipefail

version=v0.23.0
dir="${XDG_CACHE_HOME:-$HOME/.cache}/boris-lsp/gopls-$version"
if [ -x "$dir/gopls" ]; then
  echo "lsp-deps: gopls $version ok"
  exit 0
fi
echo "lsp-deps: building gopls $version into $dir"
mkdir -p "$dir"
GOBIN="$dir" GOFLAGS= go install "golang.org/x/tools/gopls@$version"
echo "lsp-deps: ok"
