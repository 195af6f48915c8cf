#!/usr/bin/env bash
# Transactions with librdkafka (confluent-kafka from pip, librdkafka bundled in its wheel;
# kcat cannot produce transactionally) against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka), client defaults apart
# from transactional.id (see txn_confluent_kafka.py) (issue 15):
#   - commit-abort: 12 committed and 6 aborted transactions of 25 keyed records over 3
#     partitions; a read_committed consumer (librdkafka's default) reads exactly the 300
#     committed records to the end of each partition, a read_uncommitted one all 450;
#   - ctp: consume-transform-produce of 500 records from a 3-partition topic to another,
#     offsets committed in each transaction (send_offsets_to_transaction), one batch aborted
#     and redone; read_committed finds every output exactly once and the group's committed
#     offsets are the input's end offsets.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init txn_confluent_kafka

python3 -c 'import confluent_kafka' 2>/dev/null || fail "confluent-kafka not importable by python3 (setup.sh installs it)"
step "confluent-kafka $(python3 -c 'import confluent_kafka as c; print(c.__version__, "librdkafka", c.libversion()[0])')"
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
for topic in rdk-txn rdk-in rdk-out; do
  "$ref" tool topics --bootstrap-server "$b" --create --topic "$topic" --partitions 3 --replication-factor 1 \
    > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create $topic"; }
done
py() { timeout 120 python3 "$here/txn_confluent_kafka.py" "$b" "$@"; }

check "commit-abort: 12 committed + 6 aborted transactions of 25; read_committed reads exactly the 300 committed"
py commit-abort rdk-txn 12 6 25 | tee "$work/commit-abort.txt" || fail "confluent-kafka commit-abort"
grep -q "committed 300 aborted 150 read_committed 300 read_uncommitted 450" "$work/commit-abort.txt" \
  || fail "confluent-kafka commit-abort: counts differ"

check "ctp: consume-transform-produce of 500 records with offsets in the transactions, one batch aborted and redone"
py ctp rdk-in rdk-out rdk-ctp 500 || fail "confluent-kafka consume-transform-produce"

sluice_stop
step "PASS in $((SECONDS - t0))s"
