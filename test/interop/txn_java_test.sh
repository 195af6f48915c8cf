#!/usr/bin/env bash
# Transactions with Java kafka-clients (the pinned Kafka release) against a real `sluice
# server` (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka), every client
# setting at its default but transactional.id and the consumers' isolation.level (issue 15):
#   - txn-produce-consume: 12 committed and 6 aborted transactions of 25 keyed records into
#     a 3-partition topic (aborted ones flushed and acknowledged first); a read_committed
#     consumer reads exactly the 300 committed records, none aborted, up to the end offsets;
#     a read_uncommitted one reads all 450;
#   - txn-fence: a second producer with the same transactional.id fences the first, whose
#     commit fails with ProducerFencedException; read_committed sees only the new one's record.
# (sluice_java_test.sh runs produce-transactional: initTransactions() fast, one commit.)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init txn_java

sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
create_topic() {
  "$ref" tool topics --bootstrap-server "$b" --create --topic "$1" --partitions "$2" --replication-factor 1 \
    > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create $1"; }
}
create_topic java-txn 3
create_topic java-txn-fence 1

check "txn-produce-consume: 12 committed + 6 aborted transactions of 25; read_committed reads exactly the 300 committed"
"$java_run" --bootstrap "$b" txn-produce-consume java-txn 12 6 25 > "$work/txn.txt" 2>&1 \
  || { cat "$work/txn.txt"; fail "java txn-produce-consume scenario"; }
grep -v '^\[' "$work/txn.txt"
grep -qx "committed 300 aborted 150 read_committed 300 read_uncommitted 450" "$work/txn.txt" \
  || fail "java txn-produce-consume: counts differ"

check "txn-fence: a new producer with the same transactional.id fences the old one"
"$java_run" --bootstrap "$b" txn-fence java-txn-fence > "$work/fence.txt" 2>&1 \
  || { cat "$work/fence.txt"; fail "java txn-fence scenario"; }
grep -v '^\[' "$work/fence.txt"

sluice_stop
step "PASS in $((SECONDS - t0))s"
