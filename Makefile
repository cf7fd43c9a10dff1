# boris — build, test and benchmark. `make test` is the whole suite (CI runs
# it through .ci/run, which installs what it needs first).

STATICCHECK_VERSION := 2026.2.2
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: test lint unit build run bench fuzz clean

## test: lint and every test (race detector on)
test: lint unit

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

## fuzz: a short run of every fuzz target
fuzz:
	go test ./internal/shell -run '^$$' -fuzz FuzzCapture -fuzztime 30s
	go test ./internal/scope -run '^$$' -fuzz FuzzResolve -fuzztime 30s

clean:
	rm -rf boris dist
