# The README's commands. `make test` is what .ci/run runs first.
GO ?= go

# The release version (the VERSION file, semantic versioning) and the git
# revision stamped into the binary by make build and make release
# (docs/releases.md). Unstamped builds (go build, go run) say VERSION-dev.
VERSION := $(shell cat VERSION)
REVISION := $(shell sh tools/release/revision.sh)
LDFLAGS := -X github.com/sluice-io/sluice/internal/version.version=$(VERSION) \
	-X github.com/sluice-io/sluice/internal/version.revision=$(REVISION)
# Where make release puts its artifacts.
DIST ?= dist

.PHONY: soak ops bench-produce-cpu bench-partitions tail-timeline ecosystem ecosystem-ci bench-ecosystem test build run release vet interop interop-heavy faults quota-long bench fuzz console-test prometheus-test \
	firsthour-test release-test container-test helm-test upgrade-test

# A static binary (no cgo: the race tests alone need it), stamped. go
# build -v names each package as it compiles it, so a cold first build
# shows its progress and a warm one names only what changed.
build:
	@echo "building bin/sluice $(VERSION) (revision $(REVISION)); the first build compiles the dependencies: a minute or two"
	@CGO_ENABLED=0 $(GO) build -v -ldflags '$(LDFLAGS)' -o bin/sluice ./cmd/sluice

# The README's first command: bin/sluice built (its progress shown), then
# make's shell replaced by the server (exec), so Ctrl-C reaches the server
# and the pid it prints is the server's. make run ARGS='--override k=v'.
run: build
	exec bin/sluice server $(ARGS)

# Static, stamped binaries for linux and darwin on amd64 and arm64 packed
# as tar.gz, a CycloneDX SBOM for each and SHA256SUMS, into $(DIST)
# (tools/release/release.sh; docs/releases.md).
release:
	@VERSION='$(VERSION)' REVISION='$(REVISION)' LDFLAGS='$(LDFLAGS)' DIST='$(DIST)' GO='$(GO)' bash tools/release/release.sh

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)
	$(GO) vet ./...

# Unit, race and integration tests (budget: 10 minutes on 2 cores). The
# real-process fault tests (test/faults' short form, then sluice verify's
# cluster and nemesis on real processes) run after the others, alone: they kill
# and stop brokers on a timetable, and sharing the 2 cores with every other
# package's tests would measure the machine's load instead of Sluice. The
# embedding examples are a separate module (examples/embed, using sluicetest
# through a replace as a user would), so they run from their own directory.
test: vet
	$(GO) test -race -timeout 9m $$($(GO) list ./... | grep -v -e /test/faults -e /test/console)
	cd examples/embed && GOFLAGS="$$GOFLAGS -mod=readonly" $(GO) vet ./... && GOFLAGS="$$GOFLAGS -mod=readonly" $(GO) test -race -count=1 ./...
	$(GO) test -timeout 5m -count=1 ./test/faults
	SLUICE_REAL_PROCESS_TESTS=1 $(GO) test -race -timeout 5m -count=1 -run 'TestClusterFaultsUnderAcksAllProduce|TestNemesisOnRealProcesses' ./internal/verify/cluster ./internal/verify/nemesis

# The fault test alone; SLUICE_FAULTS_LONG=1 for the long form.
faults:
	$(GO) test -timeout 60m -count=1 -v ./test/faults

# Real clients and Kafka's own tools against real processes (budget: 15 minutes).
interop:
	bash test/interop/run

# The web console in headless Chromium against a real sluice process
# (budget: 3 minutes; 25-80 s on 2 cores, under load); setup.sh installs
# Debian's chromium when missing (its two packages, 98 MB, took 14 s to
# fetch and unpack here). Screenshots go to $SLUICE_ARTIFACTS (default
# test/console/artifacts).
console-test:
	bash test/console/setup.sh
	$(GO) test -count=1 -timeout 5m -v ./test/console

# A real Prometheus (Debian's package; setup.sh installs it when missing)
# scraping a real 3-node cluster, queried through its HTTP API, and the
# alert rules through promtool and Prometheus itself (budget: 3 minutes).
prometheus-test:
	bash test/metrics/setup.sh
	SLUICE_PROMETHEUS_TEST=1 $(GO) test -count=1 -timeout 6m -v -run 'TestPrometheus' ./test/metrics

# The heavier interop runs, outside make interop: the exactly-once Kafka Streams
# WordCount killed with kill -9 ten times mid-stream (the suite kills it twice).
interop-heavy:
	INTEROP_TESTS=streams_eos_test.sh STREAMS_KILLS=10 bash test/interop/run

# The ecosystem suite (test/ecosystem/run, issue 20): Kafka Streams, Kafka
# Connect with Debezium and PostgreSQL, MirrorMaker 2, Flink and a schema
# registry against real sluice processes, each scenario then against the
# pinned Kafka. ECOSYSTEM_TESTS picks scenarios, ECOSYSTEM_BROKERS=sluice
# skips the Kafka runs. docs/ecosystem.md has the versions and timings.
ecosystem:
	bash test/ecosystem/run

# The part of it .ci/run runs (budget: 6 minutes): a Kafka Streams
# stream-table join and the Kafka-to-Sluice migration with MirrorMaker 2,
# on Sluice only.
ecosystem-ci:
	ECOSYSTEM_BROKERS=sluice ECOSYSTEM_TESTS="streams_join_test.sh mm2_kafka_to_sluice_test.sh" bash test/ecosystem/run

# The ecosystem benchmarks beside the pinned Kafka, one after another
# (bench/results/ecosystem-*.md): Kafka Streams WordCount records/s with
# at_least_once and exactly_once_v2, MirrorMaker 2 replication records/s.
bench-ecosystem:
	bash bench/ecosystem/streams-wordcount
	bash bench/ecosystem/mm2-throughput

# The operations fault and rate tests at full size (issue 22), outside CI's
# budget: every test/ops/*.sh one after another (throttled reassignment at
# 10 MB/s, kill -9 during a quorum change, a log dir move and a
# decommission); about 10 minutes. OPS_TESTS picks scripts by name.
ops:
	@failed=""; for t in $${OPS_TESTS:-$$(cd test/ops && ls *.sh)}; do \
		echo "== test/ops/$$t"; bash test/ops/$$t || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "ops tests failed:$$failed"; exit 1; fi

# The soak (not in CI; docs/reliability.md): sluice verify on 3 local nodes,
# RF 3, min.insync.replicas 2, the queue workload at 200 records/s, until
# SOAK_FAULTS faults of every kind have been injected (clock jumps too: the
# binary is a -tags sluicefault build, whose fault hooks only a test sets),
# one every 3 s of quiet plus its hold: about two hours for 1,000. Results
# (summary.txt, report.html, history.jsonl, the nodes' logs) under
# soak-results/; exit status 0 only when no anomaly was found.
# SOAK_INTERVAL and SOAK_HOLD set the quiet time before each fault and its
# mean hold; SOAK_ARGS adds verify flags (e.g. --workload group, --seed N).
SOAK_FAULTS ?= 1000
SOAK_INTERVAL ?= 3s
SOAK_HOLD ?= 5s
soak:
	CGO_ENABLED=0 $(GO) build -tags sluicefault -ldflags '$(LDFLAGS)' -o bin/sluice-fault ./cmd/sluice
	bin/sluice-fault verify --nodes 3 --replication-factor 3 --min-insync-replicas 2 \
		--fault-count $(SOAK_FAULTS) --fault-interval $(SOAK_INTERVAL) --fault-hold $(SOAK_HOLD) \
		--duration 3h --results soak-results $(SOAK_ARGS)

# The client quota tests over Kafka's default quota windows: a producer and a
# consumer limited to 1 MB/s measured over 36 s (make test runs them over 8 s
# with shorter windows).
quota-long:
	QUOTA_LONG=1 $(GO) test -count=1 -timeout 5m -v -run 'ByteRateQuota' ./test/security

# The produce path's CPU per GB, in process (issue 24; docs/benchmarks.md):
# one node, raw Produce v11 requests, acks=1 and acks=all, 1 and 16
# partitions; about two minutes.
bench-produce-cpu:
	$(GO) test -c -o bin/node.test ./internal/node
	dir=$$(mktemp -d) && bin/node.test -test.run '^$$' -test.bench '^BenchmarkProduce$$' \
		-test.benchtime 3000x -produce.dir=$$dir; rc=$$?; rm -rf $$dir; exit $$rc

# 10,000 partitions on one broker, Sluice beside the pinned Kafka (issue 24;
# bench/compare's partitions phase: creation, produce to all, RSS, restart
# after kill -9 and after a clean stop); about 10 minutes a round.
bench-partitions:
	bench/compare --profile full --phases partitions --out bench/results/compare-$$(date -u +%F)-partitions.md

# The fixed-rate produce run with a 100 ms latency timeline beside the
# broker's and the machine's events (rolls, GC, writeback, run-queue wait);
# TAIL_SYSTEM sluice or kafka, TAIL_ARGS more flags (--warm 5: the old
# suite warm-up, inside the producer JVM's start-up backlog); results
# under tail-results/. About 3 minutes.
TAIL_SYSTEM ?= sluice
tail-timeline: build
	$(GO) build -o bin/tail-timeline ./bench/ops/tail-timeline
	bin/tail-timeline --system $(TAIL_SYSTEM) --sluice bin/sluice --out tail-results/$(TAIL_SYSTEM)-$$(date -u +%H%M%S) $(TAIL_ARGS)

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2x ./internal/...

# Every fuzz target in the repository, FUZZTIME each (go test runs one
# target of one package at a time), one after another; it fails at the end
# if any failed, naming them. Not part of make test, which runs the
# committed seed corpora (testdata/fuzz) as ordinary tests. A new failing
# input lands in its package's testdata/fuzz.
FUZZTIME ?= 10s
fuzz:
	@failed=""; for dir in $$(grep -rl --include='*_test.go' '^func Fuzz' internal cmd tools bench test 2>/dev/null | xargs -n1 dirname | sort -u); do \
		for target in $$(grep -h '^func Fuzz' $$dir/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
			echo "== ./$$dir $$target ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) ./$$dir || failed="$$failed ./$$dir:$$target"; \
		done; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets failed:$$failed"; exit 1; fi

# The new user's path from a fresh clone: the README's first command, the
# quick start and getting-started's 3-node cluster, each command's output
# checked (test/firsthour).
firsthour-test:
	bash test/firsthour/run

# make release into a temporary directory, then checks its artifacts: static
# binaries (file(1)), the stamped version, checksums and the SBOM.
release-test:
	bash test/release/run

# The container image built from the static binary and the quick start run
# against it; skips, saying so, where no container engine can run.
container-test:
	bash test/container/run

# The Helm chart: helm lint, then the rendered manifests checked against
# Kubernetes' API types (tools installed by the test).
helm-test:
	bash test/helm/run

# A rolling upgrade of a 3-node cluster from the previous release's binary
# (built from its git tag) to this tree's, under an acks=all producer.
upgrade-test:
	bash test/upgrade/run
