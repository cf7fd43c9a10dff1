# boris — build, test and benchmark. `make test` is the whole suite (CI runs
# it through .ci/run, which installs what it needs first).

STATICCHECK_VERSION := v0.8.2
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: test lint unit build run bench fuzz clean

## test: lint, unit tests (race detector on), e2e, Helm and release checks
test: lint unit e2e release-check

## lint: gofmt, go vet, staticcheck
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	go vet ./...
	go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

## unit: go test -race over the main module
unit:
	go test -race -count=1 ./...

## build: the static release binary
build:
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o boris .

## run: serve MCP over HTTP on :8080 from this directory
run:
	go run .

## bench: overhead of the bash and view tools, then search against rg/fd
bench:
	go run ./bench/overhead
	go run ./bench/search

## fuzz: a short run of every fuzz target (FUZZTIME each, default 30s)
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	./internal/shell:FuzzCapture \
	./internal/scope:FuzzResolve \
	./internal/tools:FuzzToolCalls \
	./internal/search:FuzzGrep \
	./internal/search/glob:FuzzMatch \
	./internal/search/ignore:FuzzAgainstGit \
	./internal/search/match:FuzzSearch \
	./internal/search/printer:FuzzRender
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "fuzz $$pkg $$fn"; \
	  go test $$pkg -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME); \
	done

clean:
	rm -rf boris dist

# --- deployment: images, end-to-end tests, Helm chart, release ---

# Pinned tools, installed by `make tools`. GoReleaser v2.17.0 depends on
# go.digitalxero.dev/go-msix, which the module proxy does not serve, and v2.18
# needs Go 1.27.
GORELEASER_VERSION := v2.16.0
HELM_VERSION := v3.22.0
TOOLS_PATH := $(shell go env GOPATH)/bin
E2E_FLAGS ?= -count=1 -parallel 8 -timeout 20m
# staticcheck 2026.2.2 by its module version (the proxy resolves only that).
E2E_STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: tools images e2e e2e-lint helm-test release-check clean-images

## tools: helm and goreleaser at the pinned versions, into $(go env GOPATH)/bin
tools:
	scripts/install-tools.sh $(HELM_VERSION) $(GORELEASER_VERSION)

## images: boris:latest and boris:distroless from Dockerfile and
## Dockerfile.distroless, offline: local stand-ins replace the base images
images:
	VERSION=$(VERSION) scripts/images.sh

## e2e: the images, then the container, compose, Helm and Dockerfile tests in e2e/
e2e: images e2e-lint
	cd e2e && PATH="$(TOOLS_PATH):$$PATH" BORIS_E2E_SKIP_BUILD=1 TESTCONTAINERS_RYUK_DISABLED=true go test $(E2E_FLAGS) ./...

e2e-lint:
	cd e2e && go vet ./... && go run $(E2E_STATICCHECK) ./...

## helm-test: helm lint and helm template over the chart's value sets, decoded strictly
helm-test:
	cd e2e && PATH="$(TOOLS_PATH):$$PATH" go test -count=1 -run 'Helm|StrictDecoding' ./...

## release-check: goreleaser check and a snapshot release (no publishing, no images)
release-check:
	PATH="$(TOOLS_PATH):$$PATH" scripts/release-check.sh

## clean-images: remove the images and stand-ins `make images` made
clean-images:
	-docker rmi boris:latest boris:distroless boris-e2e:bash $$(docker images --format '{{.Repository}}:{{.Tag}}' 'boris-standin/*')
	docker image prune -f --filter label=io.boris-mcp.stage
