# boris on scratch: the static binary, a static busybox as /bin/sh (with
# symlinks for its applets, so an agent's bash tool has ls, cat, grep, sed,
# awk, find, xargs, …), CA certificates, /tmp, user 65532, /workspace.
#
#   docker build -t boris .
#
# Every base image is a build argument, so the image also builds without a
# registry from local stand-ins (`make images`, see docs/deploy.md):
#
#   GO_IMAGE       compiles boris; with PREBUILT it only needs sh and cp
#   BUSYBOX_IMAGE  any image with a static /bin/busybox
#   PREBUILT       directory in the build context holding a prebuilt static
#                  linux binary as boris or $TARGETPLATFORM/boris (the layout
#                  GoReleaser's dockers_v2 uses); empty = compile from source
#
# Written for both BuildKit and the legacy builder (no RUN --mount,
# COPY --chmod or heredocs).

ARG GO_IMAGE=golang:1.26-bookworm
ARG BUSYBOX_IMAGE=busybox:1.37.0-musl

# --- build: keep identical in Dockerfile and Dockerfile.distroless ---
FROM ${GO_IMAGE} AS build
# Marks the stage images `make images` and `make clean-images` prune.
LABEL io.boris-mcp.stage=build
WORKDIR /src
COPY . .
ARG PREBUILT=
ARG VERSION=dev
# No default: BuildKit fills it in only for an ARG declared without one.
ARG TARGETPLATFORM
RUN set -e; mkdir -p /out/workspace; \
    if [ -n "$PREBUILT" ]; then \
      bin="$PREBUILT/boris"; \
      if [ -n "$TARGETPLATFORM" ] && [ -f "$PREBUILT/$TARGETPLATFORM/boris" ]; then bin="$PREBUILT/$TARGETPLATFORM/boris"; fi; \
      cp "$bin" /out/boris; \
    else \
      CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o /out/boris .; \
    fi; \
    chmod 0755 /out/boris; \
    /out/boris --version
# --- end build ---

# The root filesystem around the binary, staged with busybox's own sh (the
# stand-in has nothing but /bin/busybox, so every command goes through it).
# /opt/boris, empty and 65532's, is where `boris install /opt/boris` puts a
# copy: an empty Docker volume mounted there takes its owner, so the
# default user can fill it.
FROM ${BUSYBOX_IMAGE} AS rootfs
LABEL io.boris-mcp.stage=rootfs
SHELL ["/bin/busybox", "sh", "-c"]
RUN set -e; bb=/bin/busybox; r=/rootfs; \
    $bb mkdir -p $r/bin $r/sbin $r/usr/bin $r/usr/sbin $r/usr/local/bin $r/etc/ssl/certs $r/tmp $r/workspace $r/home/boris $r/opt/boris; \
    $bb cp $bb $r/bin/busybox; \
    for a in $($bb --list-full); do \
      case "$a" in bin/busybox|*/bash) continue ;; esac; \
      [ -e "$r/$a" ] || $bb ln -s /bin/busybox "$r/$a"; \
    done; \
    [ -e $r/bin/sh ] || $bb ln -s /bin/busybox $r/bin/sh; \
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nboris:x:65532:65532:boris:/home/boris:/bin/sh\n' > $r/etc/passwd; \
    printf 'root:x:0:\nnobody:x:65534:\nboris:x:65532:\n' > $r/etc/group; \
    $bb chmod 1777 $r/tmp; \
    $bb chown 65532:65532 $r/workspace $r/home/boris $r/opt/boris

FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="boris" \
      org.opencontainers.image.description="MCP server for a coding agent's tools: bash, view, edit, grep, find" \
      org.opencontainers.image.source="https://github.com/boris-mcp/boris" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=rootfs /rootfs/ /
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/boris /usr/local/bin/boris
# A container is reached through its published port, so boris listens on
# every interface here; without BORIS_TOKEN it then generates a token and
# prints it once (docker logs), unless BORIS_NO_AUTH=true.
ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    BORIS_HOST=0.0.0.0
USER 65532:65532
WORKDIR /workspace
EXPOSE 8080
# Probes 127.0.0.1:$BORIS_PORT/health with the binary itself: no curl needed
# (over HTTPS when BORIS_TLS_CERT is set).
HEALTHCHECK --interval=10s --timeout=5s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/boris", "--healthcheck"]
ENTRYPOINT ["/usr/local/bin/boris"]
