# The README's commands. `make test` is what .ci/run runs first.
GO ?= go

.PHONY: test build vet interop bench

build:
	$(GO) build -o bin/sluice ./cmd/sluice

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1)
	$(GO) vet ./...

# Unit, race and in-process integration tests (budget: 10 minutes on 2 cores).
test: vet
	$(GO) test -race -timeout 9m ./...

# Real clients and Kafka's own tools against real processes (budget: 15 minutes).
interop:
	bash test/interop/run

bench:
	$(GO) test -run '^$$' -bench . -benchtime 2x ./internal/...
