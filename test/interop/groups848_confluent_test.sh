#!/usr/bin/env bash
# A KIP-848 consumer group (group.protocol=consumer) with confluent-kafka (librdkafka 2.12+
# bundled in its wheel; setup.sh pins the version) against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka), issue 17: one member joins,
# reads every record once and commits (committed = end offsets); a second member joins
# and the partitions split between them (disjoint, covering, as the group describes);
# a second wave is read once each by its partition's owner; both close, the group is
# Empty with the end offsets committed (groups848_confluent.py).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$here/groups848_lib.sh"
sluice_init groups848_confluent

python3 -c 'import confluent_kafka' 2>/dev/null || fail "confluent-kafka not importable by python3 (setup.sh installs it)"
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"

check "confluent-kafka: join, read and commit everything, a second member joins and the partitions split"
timeout 120 python3 "$here/groups848_confluent.py" "$b" cg848-rdk cg848-rdk 4 300 || fail "groups848_confluent.py"

sluice_stop
step "PASS in $((SECONDS - t0))s"
