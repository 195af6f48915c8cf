#!/usr/bin/env bash
# The online migration of a live group between the classic and the consumer protocols
# (KIP-848, group.consumer.migration.policy at its default, bidirectional) with the Java
# KafkaConsumer (the pinned kafka-clients) against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka), issue 17
# (Kip848MigrationScenario): under a live producer three classic members are replaced one
# by one by consumer-protocol members (one closed before its replacement joins, two after:
# a mixed group), the group becoming a consumer group; then the consumer-protocol members
# are replaced by classic members the same way and the group is a classic group again. At
# every step the members' assignments split the 6 partitions and describeConsumerGroups
# shows the group's type and members; every record is read, duplicates only after a
# revocation without commit, the end offsets committed after each phase, and the committed
# offsets (sampled every second) never go back.
#
# Timeouts: consumer-protocol session 6 s, heartbeat 1 s (groups848_lib.sh); the classic
# members ask for a 6 s session (the broker's minimum, group.min.session.timeout.ms, is
# lowered to 3 s here) and a 1 s heartbeat, so that they see a rebalance within a second.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$here/groups848_lib.sh"
sluice_overrides+=(
  "group.min.session.timeout.ms=3000"
)
sluice_init groups848_migration

sluice_build
"$java_run" build
sluice_start
b="$SLUICE_BOOTSTRAP"

check "migration: classic members replaced by consumer-protocol members and back under a live producer"
timeout 150 "$java_run" --bootstrap "$b" kip848-migration cg848-migrate cg848-migrate 6 \
  || fail "kip848-migration"

sluice_stop
step "PASS in $((SECONDS - t0))s"
