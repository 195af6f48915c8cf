#!/usr/bin/env bash
# Kafka's own DumpLogSegments (the pinned release, via bench/kafka-ref) reads a log that
# Sluice's log cleaner compacted (issue 6): segments, offset and time indexes, compressed
# batches rewritten by the cleaner, and a tombstone batch carrying its KIP-534 delete
# horizon. The check is the Go test
# github.com/sluice-io/sluice/internal/commitlog/cleaner.TestKafkaDumpLogSegmentsReadsCleanedLog; this script
# runs it, bounded to 2 minutes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

if ! command -v java > /dev/null; then
  echo "SKIP: java is not available, Kafka's DumpLogSegments cannot run"
  exit 0
fi

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
SLUICE_INTEROP=1 timeout 120 go test -count=1 -v -run 'TestKafkaDumpLogSegmentsReadsCleanedLog' \
  ./internal/commitlog/cleaner 2>&1 | tee "$out"
grep -q -- '--- PASS: TestKafkaDumpLogSegmentsReadsCleanedLog' "$out" || {
  echo "FAIL: TestKafkaDumpLogSegmentsReadsCleanedLog did not pass"
  exit 1
}
