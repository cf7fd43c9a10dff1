#!/usr/bin/env bash
# Builds boris:latest (Dockerfile) and boris:distroless (Dockerfile.distroless)
# without a registry: nothing is pulled. The Dockerfiles are the release ones;
# only their base-image build arguments point at local stand-ins, imported
# from files on this machine with `docker import`:
#
#   boris-standin/busybox     Debian's static /bin/busybox with its applets and
#                             the CA bundle. Serves as BUSYBOX_IMAGE, and as
#                             GO_IMAGE: with PREBUILT set the build stage only
#                             copies the binary built here, so it needs sh and
#                             cp, not Go.
#   boris-standin/distroless  what gcr.io/distroless/static-debian12:nonroot
#                             holds: passwd/group with nonroot (65532), CA
#                             certificates, tzdata, /tmp. Nothing else.
#
# Stand-ins are tagged with a hash of their content and imported only when
# that tag is missing, so rebuilding reuses Docker's layer cache.
#
# Environment: VERSION, BORIS_IMAGE (boris:latest), BORIS_DISTROLESS_IMAGE
# (boris:distroless), BUSYBOX_BIN (/bin/busybox, must be static: Debian's
# busybox-static), CA_BUNDLE, ZONEINFO.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
image=${BORIS_IMAGE:-boris:latest}
distroless=${BORIS_DISTROLESS_IMAGE:-boris:distroless}
busybox=${BUSYBOX_BIN:-/bin/busybox}
ca_bundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
zoneinfo=${ZONEINFO:-/usr/share/zoneinfo}

die() { echo "images: $*" >&2; exit 1; }
[ -x "$busybox" ] || die "$busybox not found: install Debian's busybox-static (apt-get install busybox-static)"
if command -v ldd >/dev/null && [[ $(ldd "$busybox" 2>&1 || true) != *"not a dynamic executable"* ]]; then
  die "$busybox is dynamically linked: install Debian's busybox-static instead of busybox"
fi
[ -f "$ca_bundle" ] || die "$ca_bundle not found: install ca-certificates"
[ -d "$zoneinfo" ] || die "$zoneinfo not found: install tzdata"
docker version >/dev/null || die "no Docker engine reachable"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# make_tar DIR OUT [SUBDIR...]: a reproducible tarball of DIR, everything
# owned by root except the SUBDIRs, which belong to 65532.
make_tar() {
  local dir=$1 out=$2 d
  shift 2
  local opts=(--sort=name --mtime=@0 --numeric-owner)
  local exclude=()
  for d in "$@"; do exclude+=(--exclude="./$d"); done
  tar "${opts[@]}" --owner=0 --group=0 "${exclude[@]}" -C "$dir" -cf "$out" .
  for d in "$@"; do
    tar "${opts[@]}" --owner=65532 --group=65532 -C "$dir" -rf "$out" "./$d"
  done
}

# import_standin REPO TARBALL [CHANGE...]: imports the tarball unless an image
# with the same content is already there; prints the image reference.
import_standin() {
  local repo=$1 tarball=$2 tag c
  shift 2
  tag=$({ cat "$tarball"; printf '%s\n' "$@"; } | sha256sum | cut -c1-16)
  if ! docker image inspect "$repo:$tag" >/dev/null 2>&1; then
    local changes=()
    for c in "$@"; do changes+=(--change "$c"); done
    docker import "${changes[@]}" "$tarball" "$repo:$tag" >/dev/null
    echo "images: imported $repo:$tag" >&2
  fi
  echo "$repo:$tag"
}

path_env='ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

# busybox stand-in
bb=$work/busybox
mkdir -p "$bb/bin" "$bb/etc/ssl/certs" "$bb/tmp"
cp "$busybox" "$bb/bin/busybox"
# One process for all applet links (sh among them). They point at wherever
# /proc/self/exe resolved on this host (/usr/bin/busybox when /bin is a
# symlink to usr/bin), so that path is made to lead to /bin/busybox.
"$busybox" --install -s "$bb/bin"
target=$(readlink "$bb/bin/sh")
if [ "$target" != /bin/busybox ]; then
  mkdir -p "$bb$(dirname "$target")"
  ln -s /bin/busybox "$bb$target"
fi
cp "$ca_bundle" "$bb/etc/ssl/certs/ca-certificates.crt"
chmod 1777 "$bb/tmp"
make_tar "$bb" "$work/busybox.tar"
busybox_image=$(import_standin boris-standin/busybox "$work/busybox.tar" "$path_env" 'CMD ["sh"]')

# distroless stand-in
dl=$work/distroless
mkdir -p "$dl/etc/ssl/certs" "$dl/usr/share" "$dl/tmp" "$dl/root" "$dl/home/nonroot"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$dl/etc/passwd"
printf 'root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n' >"$dl/etc/group"
printf 'hosts: files dns\n' >"$dl/etc/nsswitch.conf"
printf 'PRETTY_NAME="boris offline stand-in for gcr.io/distroless/static-debian12:nonroot"\nID=debian\nVERSION_ID="12"\n' >"$dl/etc/os-release"
cp "$ca_bundle" "$dl/etc/ssl/certs/ca-certificates.crt"
cp -a "$zoneinfo" "$dl/usr/share/zoneinfo"
chmod 1777 "$dl/tmp"
chmod 0700 "$dl/root" "$dl/home/nonroot"
make_tar "$dl" "$work/distroless.tar" home/nonroot
distroless_image=$(import_standin boris-standin/distroless "$work/distroless.tar" \
  "$path_env" 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' 'USER 65532' 'WORKDIR /home/nonroot')

# The binary, built here for the engine's architecture.
arch=$(docker version --format '{{.Server.Arch}}')
mkdir -p dist/docker
CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -ldflags "-s -w -X main.version=$version" -o dist/docker/boris .

common=(--pull=false --build-arg "GO_IMAGE=$busybox_image" --build-arg PREBUILT=dist/docker --build-arg "VERSION=$version")
docker build "${common[@]}" --build-arg "BUSYBOX_IMAGE=$busybox_image" -f Dockerfile -t "$image" .
docker build "${common[@]}" --build-arg "DISTROLESS_IMAGE=$distroless_image" -f Dockerfile.distroless -t "$distroless" .

# Earlier builds' images, untagged now: the build stage and the final images.
docker image prune -f --filter label=io.boris-mcp.stage=build >/dev/null
docker image prune -f --filter label=org.opencontainers.image.source=https://github.com/boris-mcp/boris >/dev/null

docker image ls --format 'table {{.Repository}}:{{.Tag}}\t{{.Size}}' | grep -E "^(REPOSITORY|${image%%:*}:)" || true
