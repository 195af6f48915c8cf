#!/usr/bin/env bash
# A KIP-848 consumer group shared by franz-go (kgo v1.22.3 with kgo.ServerSideBalancer, its
# opt-in to the next-generation protocol; test/interop/groups848) and the Java
# KafkaConsumer (group.protocol=consumer), against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka), issue 17: under a live
# producer the Java member joins, the franz-go member joins (both consumer-protocol
# members, the partitions split), the Java member leaves and franz-go takes the topic
# over from its committed offsets; every record read, duplicates only after a revocation
# without commit, the end offsets committed (Kip848MixedScenario).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$here/groups848_lib.sh"
sluice_init groups848_franz

sluice_build
(cd "$repo" && go build -o "$work/groups848" ./test/interop/groups848) || fail "go build ./test/interop/groups848"
"$java_run" build
sluice_start
b="$SLUICE_BOOTSTRAP"

check "franz-go and Java in one consumer-protocol group: split, hand-over, committed offsets at the end"
timeout 120 "$java_run" --bootstrap "$b" kip848-mixed cg848-franz cg848-franz 4 cg848-franz-kgo \
  "$work/groups848" --bootstrap "$b" --topic cg848-franz --group cg848-franz --name cg848-franz-kgo \
  || fail "kip848-mixed with franz-go"

sluice_stop
step "PASS in $((SECONDS - t0))s"
