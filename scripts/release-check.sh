#!/usr/bin/env bash
# Validates goreleaser.yaml and runs a snapshot release (no publishing, no
# images: those need a registry and buildx), then checks what it produced:
# the four archives named boris_<version>_<os>_<arch>.tar.gz, checksums.txt
# (SHA-256) matching them, and a linux/amd64 binary that is static and
# reports the snapshot version.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v goreleaser >/dev/null || { echo "release-check: goreleaser not found (make tools)" >&2; exit 1; }

goreleaser check
goreleaser release --snapshot --clean --skip=publish,docker

die() { echo "release-check: $*" >&2; exit 1; }
version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)
[ -n "$version" ] || die "no version in dist/metadata.json"
for target in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
  archive=dist/boris_${version}_${target}.tar.gz
  [ -f "$archive" ] || die "missing $archive"
  tar -tzf "$archive" | grep -qx boris || die "$archive holds no boris binary"
  grep -q "  boris_${version}_${target}.tar.gz\$" dist/checksums.txt || die "$archive not in checksums.txt"
done
[ "$(wc -l < dist/checksums.txt)" -eq 4 ] || die "checksums.txt should list exactly the four archives"
(cd dist && sha256sum --check --strict checksums.txt)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "dist/boris_${version}_linux_amd64.tar.gz" -C "$tmp" boris
[[ $(ldd "$tmp/boris" 2>&1 || true) == *"not a dynamic executable"* ]] || die "the linux binary is not static"
if [ "$(uname -s)/$(uname -m)" = Linux/x86_64 ]; then
  got=$("$tmp/boris" --version)
  [[ $got == *"$version"* ]] || die "boris --version says '$got', want $version"
fi
echo "release-check: ok ($version)"
