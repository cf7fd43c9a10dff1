#!/usr/bin/env bash
# Installs what `make test` needs beyond Go and a Docker engine, on Debian
# (or Ubuntu): nothing when everything is already there, so a second run
# prints one line and installs nothing.
#
#   ripgrep, fd-find   the search equivalence tests compare against rg and fd
#   git                the .gitignore differential tests and the release check
#   chromium           the browser attack test (a page of another origin)
#   busybox-static, bash-static, ca-certificates, tzdata
#                      the offline stand-ins for the images' base layers and
#                      the shell-detection e2e test
#   python3, less      the interactive-command tests drive a Python REPL
#                      under a terminal and read less's screen
#   curl               the documented curl exchanges of docs/sessions.md are
#                      run as written (blackbox TestSessionsDocCurl)
#   clangd, python3-pylsp, python3-pyflakes
#                      the language servers the lsp tests drive (C, Python;
#                      pyflakes is where pylsp's errors come from); gopls is
#                      built by scripts/lsp-deps.sh
#   mmdebstrap         the toolchain images of the real-work e2e tests,
#                      made from Debian's packages (scripts/toolchain-images.sh)
#   docker-compose     only when neither it nor `docker compose` is there
#   etcd-server, containernetworking-plugins, iptables, iproute2, and
#   containerd and runc unless some package already gives those commands
#                      the throwaway Kubernetes cluster the chart is
#                      installed on (e2e/kube; its Kubernetes binaries are
#                      built from the module proxy)
#
# Go tools (staticcheck) and libraries (Helm's and GoReleaser's packages for
# the chart and release checks) are pinned in go.mod / e2e/go.mod and fetched
# by `go` itself through the module proxy.
set -euo pipefail

packages=(ripgrep fd-find git busybox-static bash-static ca-certificates tzdata chromium python3 less curl
  clangd python3-pylsp python3-pyflakes mmdebstrap
  etcd-server containernetworking-plugins iptables iproute2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Docker's own packages (containerd.io) give containerd and runc under
# other package names, and conflict with Debian's: only a machine with
# neither command gets Debian's.
for c in containerd runc; do
  command -v "$c" >/dev/null 2>&1 || missing+=("$c")
done
compose=()
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null 2>&1; then
  compose=(docker-compose)
fi

if [ ${#missing[@]} -gt 0 ] || [ ${#compose[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "deps: missing ${missing[*]} ${compose[*]}; this script installs them with apt-get (Debian/Ubuntu) and there is none: install them by hand" >&2
    exit 1
  fi
  if [ "$(id -u)" = 0 ]; then
    as_root=(env)
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo env)
  else
    echo "deps: missing Debian packages: ${missing[*]} ${compose[*]}" >&2
    echo "deps: installing them needs root; run as root, allow sudo, or run:" >&2
    echo "  sudo apt-get install -y ${missing[*]}${compose:+ && sudo apt-get install -y --no-install-recommends ${compose[*]}}" >&2
    exit 1
  fi
  echo "deps: installing ${missing[*]} ${compose[*]}"
  "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get update -qq
  if [ ${#missing[@]} -gt 0 ]; then
    "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
  # Without recommends: Debian's docker-compose would bring a second engine.
  if [ ${#compose[@]} -gt 0 ]; then
    "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${compose[@]}"
  fi
fi

if ! docker info >/dev/null 2>&1; then
  echo "deps: no Docker engine answers (docker info failed): the image and e2e tests need one" >&2
  exit 1
fi
echo "deps: ok"
