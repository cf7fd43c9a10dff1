#!/usr/bin/env bash
# Builds, without a registry, the two toolchain images the real-work e2e
# tests (e2e/realwork_test.go) run boris in — a user's image that knows
# nothing of boris — and fetches the projects those tests work on:
#
#   boris-e2e/python:latest  Debian bookworm (minbase) with python3, pytest,
#                            git, python3-pylsp (with pyflakes) and
#                            python3-setuptools
#   boris-e2e/go:latest      Debian bookworm (minbase) with golang (Go 1.19),
#                            git, and gopls v0.23.0 built here from the module
#                            proxy (statically) as /usr/local/bin/gopls
#
# Each root filesystem is made by mmdebstrap from Debian's packages and
# imported with `docker import`. An image is tagged with a hash of what it
# is made from (this script, the suite, the packages, gopls); when that tag
# exists nothing is built, so a warm `make images` costs two `docker image
# inspect`s.
#
# The projects, kept in the user cache directory ($XDG_CACHE_HOME/boris-e2e):
#   toolz 0.12.0   Debian's python3-toolz_0.12.0-1 (the package ships the
#                  project's whole test suite; the mirror here serves no
#                  source packages), unpacked to src/toolz-0.12.0
#   BurntSushi/toml v1.6.0  from the Go module cache (go mod download)
#
# Environment: DEBIAN_MIRROR (http://deb.debian.org/debian), DEBIAN_SUITE
# (bookworm).
set -euo pipefail
cd "$(dirname "$0")/.."

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=${DEBIAN_SUITE:-bookworm}
cache="${XDG_CACHE_HOME:-$HOME/.cache}/boris-e2e"
gopls_version=v0.23.0
toolz_deb=python3-toolz_0.12.0-1_all.deb

die() { echo "toolchain-images: $*" >&2; exit 1; }
command -v mmdebstrap >/dev/null || die "mmdebstrap not found: install Debian's mmdebstrap (scripts/deps.sh does)"
docker version >/dev/null || die "no Docker engine reachable"
mkdir -p "$cache/src"

# gopls, static, so it runs in any image whatever its libc.
gopls_dir="$cache/gopls-$gopls_version-static"
if [ ! -x "$gopls_dir/gopls" ]; then
  echo "toolchain-images: building gopls $gopls_version (static) into $gopls_dir"
  mkdir -p "$gopls_dir"
  CGO_ENABLED=0 GOBIN="$gopls_dir" GOFLAGS= go install -trimpath -ldflags=-s\ -w "golang.org/x/tools/gopls@$gopls_version"
fi

# Bump when the way an image is made changes, so it is made anew.
recipe=1

# build NAME PACKAGES FILE [CHANGE...]: imports the image boris-e2e/NAME:<hash>
# unless it exists, then tags it boris-e2e/NAME:latest. FILE ("" for none)
# is copied into /usr/local/bin; the CHANGEs are docker import's --change
# lines after the common ones.
build() {
  local name=$1 packages=$2 extra=$3
  shift 3
  local changes=('ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' 'ENV LANG=C.UTF-8' 'CMD ["/bin/bash"]' "$@")
  local key tag c
  key=$({ echo "$recipe $mirror $suite $packages"; printf '%s\n' "${changes[@]}"; [ -z "$extra" ] || sha256sum <"$extra"; } | sha256sum | cut -c1-16)
  tag="boris-e2e/$name:$key"
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    local work start
    work=$(mktemp -d)
    start=$(date +%s)
    echo "toolchain-images: making $tag from $suite: $packages"
    local hooks=(--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin')
    if [ -n "$extra" ]; then
      hooks+=(--customize-hook="copy-in $extra /usr/local/bin")
    fi
    # No documentation, manual pages or translations: an agent's image
    # needs the programs.
    if ! mmdebstrap --quiet --variant=minbase --include="$packages" \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-exclude=/usr/share/info/*' \
        "${hooks[@]}" "$suite" "$work/rootfs.tar" "$mirror" >"$work/log" 2>&1; then
      tail -30 "$work/log" >&2
      rm -rf "$work"
      die "mmdebstrap failed for $name"
    fi
    local opts=()
    for c in "${changes[@]}"; do opts+=(--change "$c"); done
    docker import "${opts[@]}" "$work/rootfs.tar" "$tag" >/dev/null
    rm -rf "$work"
    echo "toolchain-images: made $tag in $(( $(date +%s) - start ))s" >&2
  fi
  docker tag "$tag" "boris-e2e/$name:latest"
}

# pyflakes is where pylsp's diagnostics of undefined names come from.
build python "python3,python3-pytest,git,python3-pylsp,python3-pyflakes,python3-setuptools,ca-certificates" ""
# Debian's golang-go recommends gcc, which minbase leaves out; Go 1.19
# would still try cgo without it (later Go versions stop by themselves).
build go "golang-go,git,ca-certificates" "$gopls_dir/gopls" 'ENV CGO_ENABLED=0'

# The Python project: toolz 0.12.0 as Debian packages it.
toolz="$cache/src/toolz-0.12.0"
if [ ! -f "$toolz/toolz/__init__.py" ]; then
  work=$(mktemp -d)
  lists=$work/lists
  mkdir -p "$lists/partial" "$work/cache/archives/partial"
  echo "deb $mirror $suite main" >"$work/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$lists" -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -qq
  (cd "$work" && apt-get "${apt_opts[@]}" download -qq python3-toolz=0.12.0-1)
  [ -f "$work/$toolz_deb" ] || die "$toolz_deb was not downloaded"
  mkdir -p "$work/x" "$toolz"
  dpkg-deb -x "$work/$toolz_deb" "$work/x"
  cp -r "$work/x/usr/lib/python3/dist-packages/toolz" "$work/x/usr/lib/python3/dist-packages/tlz" "$toolz/"
  find "$toolz" -name __pycache__ -prune -exec rm -rf {} +
  rm -rf "$work"
fi

# The Go project: BurntSushi/toml v1.6.0 from the module cache.
GOFLAGS= go mod download github.com/BurntSushi/toml@v1.6.0

docker image ls --format 'table {{.Repository}}:{{.Tag}}\t{{.Size}}' | grep -E '^(REPOSITORY|boris-e2e/(python|go):latest)' || true
