# The README's commands. `make test` is what .ci/run runs first.
GO ?= go

.PHONY: test build vet interop faults bench

build:
	$(GO) build -o bin/sluice ./cmd/sluice

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)
	$(GO) vet ./...

# Unit, race and integration tests (budget: 10 minutes on 2 cores). The
# real-process fault test (short form) runs after the others, alone: it kills
# and stops brokers on a timetable, and sharing the 2 cores with every other
# package's tests would measure the machine's load instead of Sluice.
test: vet
	$(GO) test -race -timeout 9m $$($(GO) list ./... | grep -v /test/faults)
	$(GO) test -timeout 5m -count=1 ./test/faults

# The fault test alone; SLUICE_FAULTS_LONG=1 for the long form.
faults:
	$(GO) test -timeout 60m -count=1 -v ./test/faults

# Real clients and Kafka's own tools against real processes (budget: 15 minutes).
interop:
	bash test/interop/run

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2x ./internal/...
