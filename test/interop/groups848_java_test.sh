#!/usr/bin/env bash
# KIP-848 consumer groups (group.protocol=consumer) with the Java KafkaConsumer (the pinned
# kafka-clients) against a real `sluice server` (SLUICE_INTEROP_BROKER=kafka-ref: against
# the reference Kafka), issue 17; session timeout 6 s, heartbeat 1 s (groups848_lib.sh):
#   - churn-uniform, churn-range: under a live producer three members join and then leave
#     one by one with group.remote.assignor uniform, then range; at each stable point the
#     assignments are non-empty, disjoint, balanced and cover the 6 partitions, and
#     ConsumerGroupDescribe agrees; every record is read, duplicates only after a
#     revocation without commit, the end offsets committed (Kip848ChurnScenario)
#   (the regular-expression subscriptions are in groups848_regex_test.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$here/groups848_lib.sh"
sluice_init groups848_java

sluice_build
"$java_run" build
sluice_start
b="$SLUICE_BOOTSTRAP"

for assignor in uniform range; do
  check "churn-$assignor: a, b, c join and leave one by one under a live producer (group.remote.assignor=$assignor)"
  timeout 120 "$java_run" --bootstrap "$b" kip848-churn "cg848-churn-$assignor" "cg848-churn-$assignor" 6 "$assignor" \
    || fail "kip848-churn with $assignor"
done

sluice_stop
step "PASS in $((SECONDS - t0))s"
