# boris — build, test and benchmark. `make test` is the whole suite: it
# installs what it lacks first (scripts/deps.sh), and CI runs just that.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: test deps lint unit otelcol build run bench fuzz clean docs

## test: the Debian packages it needs, lint, unit tests (race detector on),
## e2e (containers, compose, Helm chart, release check)
test: deps lint unit e2e

## deps: install missing Debian packages (apt-get, as root or with sudo),
## and build the pinned gopls of the lsp tests into the user cache directory
deps:
	scripts/deps.sh
	scripts/lsp-deps.sh

## lint: gofmt, go vet, staticcheck
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	go tool staticcheck ./...

## unit: go test -race over the main module (the OpenTelemetry Collector
## the trace tests export to is built first, once: minutes the first time)
unit: otelcol
	go test -race -count=1 -timeout 45m ./...

## otelcol: the collector of the trace tests
## (internal/otelcoltest/testdata/otelcol), built from
## the module proxy into the user cache directory by its own self-test
otelcol:
	go test -count=1 -timeout 30m -run TestCollectorExportsWhatItReceives ./internal/otelcoltest

## build: the static release binary
build:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o boris .

## docs: regenerate the reference pages made from the code (docs/flags.md
## from the flags, docs/tools.md from the tools each mode registers); a
## test in internal/docgen fails when the committed pages differ
docs:
	go run ./internal/docgen/cmd .

## run: serve MCP over HTTP on :8080 from this directory
run:
	go run .

## bench: overhead of the bash and view tools, apply_patch against
## str_replace, interactive round trips, then search against rg/fd
bench:
	go run ./bench/overhead
	go run ./bench/patch
	go run ./bench/interactive
	go run ./bench/search
	go run ./bench/rules

## fuzz: a short run of every fuzz target (FUZZTIME each, default 30s)
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	./internal/shell:FuzzCapture \
	./internal/scope:FuzzResolve \
	./internal/tool/catalog:FuzzToolCalls \
	./internal/search:FuzzGrep \
	./internal/search/glob:FuzzMatch \
	./internal/ignore:FuzzAgainstGit \
	./internal/search/match:FuzzSearch \
	./internal/search/match/dfa:FuzzDFA \
	./internal/search/printer:FuzzRender \
	./internal/patch:FuzzPatch \
	./internal/term:FuzzFilter \
	./internal/rules:FuzzCommand
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "fuzz $$pkg $$fn"; \
	  go test $$pkg -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME); \
	done

clean:
	rm -rf boris dist

# --- deployment: images, end-to-end tests, Helm chart, release ---

# GoReleaser for a real release only; the release check uses its config
# package from e2e/go.mod. v2.17.0 depends on go.digitalxero.dev/go-msix,
# which the module proxy does not serve, and v2.18 needs Go 1.27.
GORELEASER_VERSION := v2.16.0
E2E_FLAGS ?= -count=1 -parallel 8 -timeout 20m

.PHONY: images e2e e2e-lint kube-bin cluster-up cluster-down helm-test release-check release clean-images

## images: boris:latest and boris:distroless from Dockerfile and
## Dockerfile.distroless, offline: local stand-ins replace the base images;
## then the toolchain images of the real-work tests (Debian's packages,
## made once and kept: scripts/toolchain-images.sh)
images:
	VERSION=$(VERSION) scripts/images.sh
	scripts/toolchain-images.sh

## e2e: the images, then the container, compose, Helm (rendered, and
## installed on a throwaway Kubernetes cluster), Dockerfile and release
## tests in e2e/
e2e: images e2e-lint kube-bin
	cd e2e && BORIS_E2E_SKIP_BUILD=1 TESTCONTAINERS_RYUK_DISABLED=true go test $(E2E_FLAGS) ./...

## kube-bin: the Kubernetes binaries of the test cluster, built from the
## module proxy at the version e2e/kube/k8sbin/go.mod pins (minutes the
## first time, then found in the user cache directory)
kube-bin:
	cd e2e && go run ./kube/cmd/cluster bin

## cluster-up: the test cluster the chart's e2e tests use, started by hand
## (root; prints the KUBECONFIG to export); cluster-down removes it all
cluster-up: images
	cd e2e && go run ./kube/cmd/cluster up

cluster-down:
	cd e2e && go run ./kube/cmd/cluster down

e2e-lint:
	cd e2e && go vet ./... && go tool staticcheck ./...

## helm-test: lint and render the chart over its value sets (Helm's Go
## packages), every object decoded strictly
helm-test:
	cd e2e && go test -count=1 -run 'Helm|StrictDecoding' ./...

## release-check: goreleaser.yaml loaded strictly by GoReleaser's config
## package, and the snapshot it describes built and checked (no publishing)
release-check:
	cd e2e && go test -count=1 -run 'Release' ./...

## release: a real release with the pinned GoReleaser, from a vX.Y.Z tag
release:
	go run github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION) release --clean --release-notes=NOTES.md

## clean-images: remove the images and stand-ins `make images` made
clean-images:
	-docker rmi boris:latest boris:distroless boris-e2e:bash $$(docker images --format '{{.Repository}}:{{.Tag}}' 'boris-standin/*') $$(docker images --format '{{.Repository}}:{{.Tag}}' 'boris-e2e/*')
	docker image prune -f --filter label=io.boris-mcp.stage
