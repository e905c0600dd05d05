# convtrace: `make run` serves the demo, `make test` runs every test.
GO   ?= go
BIN  := bin/convtrace
ROOT := $(shell id -u 2>/dev/null)

.PHONY: run test build install otelcol bench bench-viewer bench-cost clickhouse zookeeper chdb chromium agents lint

build:
	@[ -x $(BIN) ] || echo "building convtrace: the first build compiles every dependency, several minutes on a small machine; later builds take seconds"
	$(GO) build -o $(BIN) ./cmd/convtrace

## install: put convtrace on PATH (go install, into $(go env GOPATH)/bin
## unless GOBIN says otherwise).
install:
	@[ -x $(BIN) ] || echo "building convtrace: the first build compiles every dependency, several minutes on a small machine"
	$(GO) install ./cmd/convtrace
	@bin=$$($(GO) env GOBIN); bin=$${bin:-$$($(GO) env GOPATH)/bin}; \
	  case ":$$PATH:" in *":$$bin:"*) echo "installed $$bin/convtrace";; \
	  *) echo "installed $$bin/convtrace; $$bin is not on PATH: add it, e.g. export PATH=\"$$bin:\$$PATH\"";; esac

## run: build, start a local ClickHouse, migrate, record the demo once per
## store and serve the viewer on http://127.0.0.1:$(PORT) (Ctrl-C stops
## both). PORT=8081 make run moves the viewer; DEMO_AGAIN=1 records
## another demo run.
PORT ?= 8080
run: clickhouse build
	./$(BIN) serve --demo --listen 127.0.0.1:$(PORT) $(if $(DEMO_AGAIN),--demo-again)

## test: install what the tests need, then vet, check formatting and run
## every test against real servers the tests start themselves: this module's
## and, side by side, the Collector exporter's (its own module, which ./...
## does not enter; mostly compiling the Collector).
REQUIRE := CONVTRACE_REQUIRE_CLICKHOUSE=1 CONVTRACE_REQUIRE_CLUSTER=1 CONVTRACE_REQUIRE_CHDB=1 CONVTRACE_REQUIRE_CHROMIUM=1 \
  CONVTRACE_REQUIRE_FRAMEWORKS=1 CONVTRACE_REQUIRE_AGENTS=1
OTELCOL_MOD := collector/otelcol/convtraceexporter
test: clickhouse zookeeper chdb chromium agents lint
	@{ (cd $(OTELCOL_MOD) && $(GO) vet ./... && $(REQUIRE) $(GO) test -count=1 -timeout 20m ./...) > .otelcol-test.log 2>&1; \
	  echo $$? > .otelcol-test.rc; } & \
	$(REQUIRE) $(GO) test -count=1 -timeout 45m ./...; main=$$?; wait; \
	cat .otelcol-test.log; otelcol=$$(cat .otelcol-test.rc); rm -f .otelcol-test.log .otelcol-test.rc; \
	test $$main -eq 0 && test $$otelcol -eq 0

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change: $$out" >&2; exit 1; fi
	$(GO) vet ./...

## otelcol: an OpenTelemetry Collector with the convtrace exporter, built by
## the Collector Builder from collector/otelcol/builder-config.yaml into
## bin/otelcol-convtrace/otelcol-convtrace.
OCB := go.opentelemetry.io/collector/cmd/builder@v0.165.0
otelcol:
	@mkdir -p bin
	$(GO) run $(OCB) --config collector/otelcol/builder-config.yaml

## bench: the benchmarks BENCHMARKS.md reports: recording, ingest, drain,
## the storage of a recorded agent loop (both history sizes), then the
## viewer, the cost report and the reads by key (trace, export, status
## search, latency) over ten million synthetic turns, each figure
## printed beside its baseline from the same run and their ratio. The turns
## are generated once (about a minute, 1.5 GB) into a ClickHouse kept in
## BENCH_DATA, and reused by every later run.
BENCH_DATA ?= $(CURDIR)/.bench-data
BENCH_TURNS ?= 10000000
BENCH_ENV = CONVTRACE_BENCH=1 CONVTRACE_REQUIRE_CLICKHOUSE=1 CONVTRACE_BENCH_DATA=$(BENCH_DATA) CONVTRACE_BENCH_TURNS=$(BENCH_TURNS)
bench: clickhouse
	CONVTRACE_REQUIRE_CLICKHOUSE=1 $(GO) test -run '^$$' -bench Call -benchtime 2s -count 5 ./collector
	CONVTRACE_REQUIRE_CLICKHOUSE=1 $(GO) test -run '^$$' -bench 'IngestOTLPHTTP|InsertClickHouseOnly' -cpu 1 -benchtime 200x -count 3 ./collector
	CONVTRACE_REQUIRE_CLICKHOUSE=1 $(GO) test -run '^$$' -bench 'ExporterDrainAfterOutage' -benchtime 1x ./collector
	CONVTRACE_REQUIRE_CLICKHOUSE=1 $(GO) test -run '^$$' -bench 'StorageAgentLoop' -benchtime 1x ./collector
	$(BENCH_ENV) $(GO) test -run '^$$' -bench '^(BenchmarkViewer|BenchmarkCostAPI10M|BenchmarkReadsByKey)$$' -benchtime 3x -count 1 -timeout 90m ./viewer

## bench-viewer: the viewer's routes over the same turns, five times each
## (BENCHMARKS.md, issues 5 and 13), then page loads in Chromium; benchstat
## prints the medians.
BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
bench-viewer: clickhouse chromium
	@mkdir -p test-output
	$(BENCH_ENV) CONVTRACE_REQUIRE_CHROMIUM=1 $(GO) test -run '^$$' -bench '^BenchmarkViewer' -benchtime 3x -count 5 -timeout 90m -v ./viewer 2>&1 | tee test-output/bench-viewer.txt
	@! grep -Eq '^(--- )?FAIL' test-output/bench-viewer.txt || { echo "bench-viewer: a benchmark failed, see test-output/bench-viewer.txt" >&2; exit 1; }
	$(GO) run $(BENCHSTAT) test-output/bench-viewer.txt

## bench-cost: GET /api/cost over the same turns (BENCHMARKS.md, issues 6
## and 13): warm and cold requests, 10 ops each (median-ms is their
## median), beside the fingerprint, count and FINAL baselines.
bench-cost: clickhouse
	@mkdir -p test-output
	$(BENCH_ENV) $(GO) test -run '^$$' -bench '^BenchmarkCostAPI10M' -benchtime 10x -count 1 -timeout 90m ./viewer 2>&1 | tee test-output/bench-cost.txt
	@! grep -Eq '^(--- )?FAIL' test-output/bench-cost.txt || { echo "bench-cost: a benchmark failed, see test-output/bench-cost.txt" >&2; exit 1; }

# A ClickHouse server binary: Debian's clickhouse-server, installed with
# apt-get when missing and we are root; otherwise say the one command to run.
clickhouse:
	@if command -v clickhouse >/dev/null 2>&1 || command -v clickhouse-server >/dev/null 2>&1; then :; \
	elif [ "$(ROOT)" = 0 ]; then \
	  echo "installing clickhouse-server with apt-get"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q clickhouse-server clickhouse-client; \
	else \
	  echo "no ClickHouse server found; install one with: sudo apt-get install -y clickhouse-server clickhouse-client" >&2; exit 1; \
	fi

# ZooKeeper for the cluster tests (2 shards × 2 replicas on loopback,
# internal/chcluster): Debian's zookeeper package, which the tests run
# standalone with java on a free port; its service is not used.
zookeeper:
	@if [ -f /usr/share/java/zookeeper.jar ] && command -v java >/dev/null 2>&1; then :; \
	elif [ "$(ROOT)" = 0 ]; then \
	  echo "installing zookeeper with apt-get"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q zookeeper default-jre-headless; \
	else \
	  echo "no ZooKeeper found; install it with: sudo apt-get install -y zookeeper default-jre-headless" >&2; exit 1; \
	fi

# chDB (ClickHouse 26.x in-process, from npm) for the modern-server DDL check.
chdb:
	@if ! command -v npm >/dev/null 2>&1; then \
	  if [ "$(ROOT)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm; \
	  else echo "npm not found; install it with: sudo apt-get install -y nodejs npm" >&2; exit 1; fi; \
	fi
	@[ -d internal/chdbcheck/node_modules/chdb ] || npm ci --prefix internal/chdbcheck --no-audit --no-fund --ignore-scripts

# The third-party software the fidelity tests drive against a fake
# provider, pinned in lock files: JS frameworks and instrumentations
# (internal/frameworks) and the Claude Code and Codex CLIs
# (internal/agentcheck; without install scripts, as npm 11 runs none
# unless approved, Claude Code's native binary is still linked). npm is
# installed by the chdb target.
agents: chdb
	@[ -d internal/frameworks/node_modules/openai ] || npm ci --prefix internal/frameworks --no-audit --no-fund --ignore-scripts
	@[ -d internal/agentcheck/node_modules/@openai/codex ] || npm ci --prefix internal/agentcheck --no-audit --no-fund

# Debian's Chromium for the viewer's browser tests (driven with chromedp);
# any binary internal/testkit.FindBrowser accepts will do.
chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  command -v google-chrome >/dev/null 2>&1 || command -v google-chrome-stable >/dev/null 2>&1; then :; \
	elif [ "$(ROOT)" = 0 ]; then \
	  echo "installing chromium with apt-get"; \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	else \
	  echo "no chromium found; install it with: sudo apt-get install -y chromium" >&2; exit 1; \
	fi
