#!/usr/bin/env bash
# Kafka's own DumpLogSegments (the pinned release, via bench/kafka-ref) reads the segments,
# offset and time indexes and producer snapshots that Sluice's commitlog writes, and agrees
# with what was written: offsets, counts, codecs, producer ids/sequences, keys/values, every
# index entry, no mismatch or corruption reported (issue 3). The check itself is the Go test
# github.com/sluice-io/sluice/test/dumplog.TestKafkaDumpLogSegments; this script runs it (bounded to 2 minutes)
# and also smoke-runs the manifest generator `go run ./test/dumplog/gen`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

if ! command -v java > /dev/null; then
  echo "SKIP: java is not available, Kafka's DumpLogSegments cannot run"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "-- go run ./test/dumplog/gen"
timeout 60 go run ./test/dumplog/gen -dir "$work/logdir" > "$work/manifest.json"
python3 - "$work/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
segs = m["segments"]
assert len(segs) >= 2, "manifest: fewer than 2 segments"
print("manifest: %d segments, %d batches, %d index entries, %d snapshots" % (
    len(segs), sum(len(s["batches"]) for s in segs), sum(len(s["index"]) for s in segs), len(m["snapshots"])))
PY

echo "-- SLUICE_INTEROP=1 go test ./test/dumplog"
SLUICE_INTEROP=1 timeout 110 go test -count=1 -v -run 'TestKafkaDumpLogSegments' ./test/dumplog 2>&1 | tee "$work/test.txt"
grep -q -- '--- PASS: TestKafkaDumpLogSegments' "$work/test.txt" || {
  echo "FAIL: TestKafkaDumpLogSegments did not pass"
  exit 1
}
