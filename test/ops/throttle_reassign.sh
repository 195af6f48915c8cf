#!/usr/bin/env bash
# The issue 22 throttle check at full size, run by hand (over CI's 90 s budget): 3 Sluice
# processes, a 200 MiB partition moved to a new replica with Kafka's kafka-reassign-partitions
# --execute --throttle 10000000; the move's rate (bytes on the new replica over time, from
# DescribeLogDirs) must be 10 MB/s within 15%, and a producer (acks=all, to another topic on
# the move's leader) must keep at least 80% of its unthrottled throughput; --verify clears
# the throttles. Prints the load average before and after: figures are only comparable on
# a quiet machine. Usage: test/ops/throttle_reassign.sh [MiB] [bytes/s]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
echo "loadavg before: $(cat /proc/loadavg)"
status=0
SLUICE_INTEROP=1 SLUICE_THROTTLE_MB="${1:-200}" SLUICE_THROTTLE_RATE="${2:-10000000}" SLUICE_THROTTLE_PRODUCER=1 \
  go test -count=1 -timeout 600s -run '^TestReplicationThrottleKafkaTool$' -v ./test/integration/ 2>&1 |
  grep -E '^(=== RUN|--- |PASS|FAIL|ok)|throttle_test.go' | cut -c1-600 || status=$?
echo "loadavg after: $(cat /proc/loadavg)"
exit "$status"
