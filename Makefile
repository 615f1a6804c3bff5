# outcore — build, serve, test, benchmark.
# GOFLAGS and CGO_CFLAGS live here and nowhere else (.ci/run calls make).
export CGO_ENABLED := 1
export CGO_CFLAGS := -O2 -Wno-deprecated-declarations
export GOFLAGS := -buildvcs=false
# The toolchain go.mod names (its `toolchain` line: the standard library's
# security fixes, docs/SECURITY.md), fetched through the module proxy
# where the local Go is older, even where GOTOOLCHAIN=local is the default.
export GOTOOLCHAIN := auto

BIN    := bin/outcore
ADDR   ?= 127.0.0.1:8080
# Packages whose code is concurrent run again under the race detector.
RACE_PKGS ?= ./engine/... ./experiments/... ./internal/cgroup ./experiments/supervise ./store/... ./web/...

.PHONY: all build run test test-long test-race fuzz-short bench bench-variants generate check-generated deps lint vet vulncheck clean

all: build

# The commit, and "true" when the tree has changes git status reports
# (`outcore version` then says -dirty).
VERSION_LDFLAGS := -X outcore/internal/version.Commit=$(shell git rev-parse --short=12 HEAD 2>/dev/null) \
	-X outcore/internal/version.Dirty=$(shell test -n "$$(git status --porcelain 2>/dev/null)" && echo true)

build: generate
	go build -ldflags '$(VERSION_LDFLAGS)' -o $(BIN) ./cmd/outcore

## run: build, create the default dataset on first start, serve the dashboard
run: build
	./$(BIN) serve --addr $(ADDR)

## test: everything CI checks
test: deps check-generated lint
	go test -count=1 -timeout 30m ./...
	go test -count=1 -race -short $(RACE_PKGS)
	scripts/fuzz-short.sh

## test-long: the tests too heavy for `test` (OUTCORE_LONG_TESTS=1): the memory
## contract on `medium` at 25 % and 50 % for every variant, each run in a real
## memory cgroup, and every variant at its floor on `small` (cmd/outcore/cli
## TestEveryVariantWithinItsAllowanceOnMedium, TestEveryVariantRunsAtItsFloor,
## TestEveryStudyCreatesOnMedium; generates `medium` once into $$OUTCORE_TEST_DATA or the user cache directory)
test-long:
	OUTCORE_LONG_TESTS=1 go test -count=1 -timeout 75m -run 'OnMedium$$|RunsAtItsFloor$$' -v ./cmd/outcore/cli

## fuzz-short: every fuzz target of outside input for FUZZTIME (default 3s) each (scripts/fuzz-short.sh)
fuzz-short:
	scripts/fuzz-short.sh

deps:
	@scripts/install-deps.sh

generate:
	go tool templ generate -path web >/dev/null

## check-generated: the committed *_templ.go files match their .templ sources
check-generated:
	@scripts/check-generated.sh

## lint: gofmt, goimports, templ fmt, go mod tidy and go vet leave nothing to say (scripts/lint.sh)
lint:
	@scripts/lint.sh

vet:
	go vet ./...

## vulncheck: govulncheck against a database built offline from the golang.org/x/vulndb module (scripts/vulncheck.sh, docs/SECURITY.md)
vulncheck:
	scripts/vulncheck.sh

## bench: the benchmarks quoted in docs/BENCHMARKS.md
bench: deps build
	scripts/bench.sh

## bench-variants: the variants under memory limits (about 1.5 h; docs/benchmarks/variants.md)
bench-variants: deps build
	scripts/bench.sh variants

clean:
	rm -rf bin
