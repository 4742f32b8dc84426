# Strata's build and test entry points. `make test` is the one command CI
# runs (.ci/run) and the README names.

GO ?= go
# Packages run again under the race detector in short mode: every package
# with goroutines; the long randomized loops shrink under -short. Left out:
# the two longest simulations (the FlashStream experiments and the block
# policies), single-threaded discrete-event runs whose only concurrency is
# the job runner, internal/lab/sim/des.RunJobs, raced in its own package;
# under the detector they took 4.6 and 2.7 of the stage's minutes.
RACE_FLAGS ?= -race -short -timeout 30m
RACE_PKGS ?= $(shell $(GO) list ./... | grep -v -e /internal/lab/sim/flashstream -e /internal/lab/sim/policysim)

.PHONY: test build vet fmt-check fuzz bench media-deps test-browser

# STRATA_REQUIRE_FFMPEG turns the video tests' skip without ffmpeg into a
# failure: test-browser has installed it. STRATA_CLUSTER_TESTS runs three
# edge nodes behind nginx (cmd/strata/cluster_test.go; it installs nginx
# where missing). STRATA_PEERS_TESTS runs scripts/peers/run.sh --quick of
# each scenario, link, hot and device (Strata's edge, nginx, Varnish and
# Traffic Server in front of one origin, about 5 minutes in all;
# internal/lab/peers/quick_test.go; apt-installs the peers).
# STRATA_IIIF_TESTS runs the IIIF community's validator at level 2 against
# a real server (cmd/strata/iiif_test.go; it pip-installs iiif-validator
# into .cache where missing). STRATA_TORTURE_TESTS runs 10 cycles of the
# crash torture (cmd/strata-lab/torture_test.go: kill -9 under load, restart,
# check every byte). STRATA_CACHE_TESTS runs the HTTP caching test suite
# against an edge (cmd/strata/cachetests_test.go, scripts/cache-tests/run.sh;
# about a minute) and fails below its floor of passes.
test: fmt-check vet test-browser
	STRATA_REQUIRE_FFMPEG=1 STRATA_REQUIRE_S3=1 STRATA_CLUSTER_TESTS=1 STRATA_PEERS_TESTS=1 STRATA_IIIF_TESTS=1 STRATA_CACHE_TESTS=1 \
		STRATA_TORTURE_TESTS=1 $(GO) test -timeout 30m ./...
	$(GO) test $(RACE_FLAGS) $(RACE_PKGS)
	for f in FuzzFrontWire FuzzFrontParse FuzzEarlyProblem; do $(GO) test ./internal/httpapi/front/ -run '^$$' -fuzz "^$$f\$$" -fuzztime 10s || exit 1; done

# media-deps installs what the video tests use, where it is missing:
# ffmpeg and ffprobe (generated test videos, decode checks), Debian's
# Chromium, and tests/browser's npm packages (dash.js, hls.js,
# playwright-core) as its package-lock.json pins them.
media-deps:
	@command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null || { apt-get update && apt-get install -y ffmpeg; }
	@command -v chromium >/dev/null || { apt-get update && apt-get install -y chromium; }
	cd tests/browser && npm ci --no-audit --no-fund

# test-browser runs a real strata server and plays a generated title in
# headless Chromium with dash.js and hls.js: normal play, the reduced
# level L3 and fast-forward through the trick level L4; through an edge
# node in front of nginx, a first and a second viewing (the second from
# RAM/flash: TestEdgePlayback, which installs nginx where missing); and it
# opens the live dashboard under load (its screenshot is kept in
# test-output/).
test-browser: media-deps
	mkdir -p test-output
	STRATA_BROWSER_TESTS=1 STRATA_REQUIRE_FFMPEG=1 $(GO) test ./cmd/strata/ -run '^(TestVideoBrowser|TestEdgePlayback|TestDashboardBrowser)$$' \
		-count=1 -v -artifacts -outputdir $(CURDIR)/test-output

# build writes the server (bin/strata) and the lab (bin/strata-lab: the
# simulators and benchmarking tools, which run the strata beside them).
build:
	$(GO) build -o bin/strata ./cmd/strata
	$(GO) build -o bin/strata-lab ./cmd/strata-lab

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Run every fuzz target of the module for FUZZTIME each (default 60s);
# scripts/fuzz.sh finds them, so none is forgotten.
FUZZTIME ?= 60s
fuzz:
	scripts/fuzz.sh $(FUZZTIME)

bench:
	$(GO) test ./internal/core/tier/ -run '^$$' -bench . -benchmem
