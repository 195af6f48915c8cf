#!/usr/bin/env bash
# Java kafka-clients (the pinned Kafka release) against a real `sluice server`, every
# client setting at its default:
#   - producer (acks=all, idempotent) sends 1,000 keyed records, all must be acknowledged;
#   - consumer assigns partition 0 (no group), seeks to the beginning and must read exactly
#     those 1,000 records back, key-i/value-i at offset i;
#   - AdminClient round trip: describeCluster, createTopics, describeTopics, listTopics,
#     deleteTopics; then describeConfigs on a topic (override and default) and on the broker;
#   - a producer with a transactional.id: initTransactions() within 20 s, one record committed
#     (txn_java_test.sh checks what read_committed consumers read).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init java
records=1000
topic=java-produce

sluice_build
sluice_start

check "admin: describeCluster, createTopics, describeTopics, listTopics, deleteTopics"
"$java_run" --bootstrap "$SLUICE_BOOTSTRAP" admin || fail "java admin scenario"

check "admin-configs: describeConfigs on a topic override, a topic default, the broker; on a deleted topic"
"$java_run" --bootstrap "$SLUICE_BOOTSTRAP" admin-configs || fail "java admin-configs scenario"

# The topic is created by the producer's Metadata request (auto-creation, one partition by
# default), as an application that never calls the AdminClient would.
check "produce: $records records with the producer's defaults (acks=all, idempotent), all acknowledged"
produce_rc=0
"$java_run" --bootstrap "$SLUICE_BOOTSTRAP" produce "$topic" "$records" > "$work/produce.txt" 2>&1 || produce_rc=$?
cat "$work/produce.txt"
[[ $produce_rc -eq 0 ]] && grep -qx "acked $records" "$work/produce.txt" \
  || fail "java produce scenario (exit $produce_rc): not every record acknowledged"

check "consume-values: assign partition 0, seek to beginning, exactly $records records with their keys and values"
"$java_run" --bootstrap "$SLUICE_BOOTSTRAP" consume-values "$topic" 0 "$records" || fail "java consume-values scenario"

check "consume-assign: assign partition 0, seek to offset 500, offsets 500..999 with no gap"
"$java_run" --bootstrap "$SLUICE_BOOTSTRAP" consume-assign "$topic" 0 500 500 || fail "java consume-assign scenario"

check "produce-transactional: initTransactions() within 20 s, one record committed"
"$java_run" --bootstrap "$SLUICE_BOOTSTRAP" produce-transactional java-transactional \
  || fail "java produce-transactional scenario"

sluice_stop
step "PASS in $((SECONDS - t0))s"
