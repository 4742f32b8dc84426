# Strata's build and test entry points. `make test` is the one command CI
# runs (.ci/run) and the README names.

GO ?= go
# Packages run again under the race detector in short mode: everything, so
# that any package with goroutines is covered; the long randomized loops
# shrink under -short.
RACE_FLAGS ?= -race -short

.PHONY: test build vet fmt-check fuzz bench

test: fmt-check vet
	$(GO) test ./...
	$(GO) test $(RACE_FLAGS) ./...

build:
	$(GO) build -o bin/strata ./cmd/strata

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Run each fuzz target for FUZZTIME (default 60s).
FUZZTIME ?= 60s
fuzz:
	$(GO) test ./internal/tier/ -run '^$$' -fuzz FuzzDecodeBlock -fuzztime $(FUZZTIME)
	$(GO) test ./internal/ident/ -run '^$$' -fuzz FuzzParseObject -fuzztime $(FUZZTIME)

bench:
	$(GO) test ./internal/tier/ -run '^$$' -bench . -benchmem
