#!/usr/bin/env bash
# Consume-transform-produce with Java kafka-clients (the pinned Kafka release: Transactions
# V2, so the offsets go to the group coordinator in TxnOffsetCommit v5+ with no
# AddOffsetsToTxn, and the coordinator adds __consumer_offsets to the transaction itself, as
# Kafka's AddPartitionsToTxnManager does) against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka) (issue 15):
#   - txn-offsets: 500 records from a 3-partition topic to another, upper-cased, in one
#     transaction per poll of at most 50 with sendOffsetsToTransaction(groupMetadata()); the
#     second transaction aborted and its records redone after a rewind to the committed
#     offsets; a last transaction of offsets alone; read_committed finds every output
#     exactly once and the group's committed offsets are the input's end offsets.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init txn_java_offsets

sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
for topic in java-ctp-in java-ctp-out; do
  "$ref" tool topics --bootstrap-server "$b" --create --topic "$topic" --partitions 3 --replication-factor 1 \
    > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create $topic"; }
done

check "txn-offsets: consume-transform-produce of 500 records, offsets in each transaction, one aborted, one of offsets alone"
"$java_run" --bootstrap "$b" txn-offsets java-ctp-in java-ctp-out java-ctp 500 > "$work/ctp.txt" 2>&1 \
  || { grep -v '^\[' "$work/ctp.txt" | tail -n 20; fail "java txn-offsets scenario"; }
grep -v '^\[' "$work/ctp.txt"

sluice_stop
step "PASS in $((SECONDS - t0))s"
