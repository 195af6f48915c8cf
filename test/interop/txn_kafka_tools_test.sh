#!/usr/bin/env bash
# Kafka's kafka-transactions tool (bench/kafka-ref tool transactions, the pinned release)
# against a real `sluice server` (SLUICE_INTEROP_BROKER=kafka-ref: against the reference
# Kafka), with transaction.partition.verification.enable=false so that a hanging
# transaction can be made (issue 15). In a 2-partition topic:
#   - tools-done: a librdkafka producer commits one transaction and aborts one;
#   - tools-open: a librdkafka producer opens a transaction on partition 0 and is kill -9ed
#     (the coordinator knows it: Ongoing, not hanging);
#   - tools-hang: txnhang writes a transactional batch to partition 1 without adding the
#     partition to its transaction and is kill -9ed: open on the partition, unknown to the
#     coordinator, a hanging transaction;
# then list (all, by pattern, by duration), describe (each id, an unknown one),
# describe-producers, find-hanging (by broker, so internal topics too) finds only
# tools-hang, abort --start-offset closes it (a second abort is refused), after which
# find-hanging --topic finds nothing, a committed record on partition 1 is visible to
# read_committed, and a new tools-open producer fences the killed one and commits on
# partition 0. Every answer is normalised (txn_kafka_tools_normalise.py: cells trimmed,
# producer ids named by their transactional id, times out, rows sorted) and the transcript
# must equal txn_kafka_tools.expected, which is the pinned Kafka's: run with
# SLUICE_INTEROP_BROKER=kafka-ref to check it still is.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init txn_kafka_tools

killed=()
stop_all() {
  local pid
  for pid in "${killed[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  sluice_cleanup
}
trap stop_all EXIT

python3 -c 'import confluent_kafka' 2>/dev/null || fail "confluent-kafka not importable by python3 (setup.sh installs it)"
sluice_build
(cd "$repo" && go build -o "$work/txnhang" ./test/interop/txnhang) || fail "go build ./test/interop/txnhang"
sluice_overrides=(transaction.partition.verification.enable=false)
sluice_start
b="$SLUICE_BOOTSTRAP"

# leave_open DIR NAME COMMAND...: runs COMMAND until it prints a line starting "open",
# kill -9s it, and leaves that line in DIR/NAME.txt.
leave_open() {
  local dir="$1" name="$2" pid deadline=$((SECONDS + 60)); shift 2
  "$@" > "$dir/$name.out" 2>&1 &
  pid=$!
  killed+=("$pid")
  until grep -q '^\(confluent-kafka: \)\?open' "$dir/$name.out"; do
    kill -0 "$pid" 2>/dev/null || { cat "$dir/$name.out"; fail "$name exited before leaving its transaction open"; }
    ((SECONDS < deadline)) || { cat "$dir/$name.out"; fail "$name: no open transaction within 60 s"; }
    sleep 0.2
  done
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  grep -m1 '^\(confluent-kafka: \)\?open' "$dir/$name.out" | sed 's/^confluent-kafka: //' > "$dir/$name.txt"
}

# setup BOOTSTRAP DIR: the topic and the three transactional ids.
setup() {
  local b="$1" dir="$2"
  "$ref" tool topics --bootstrap-server "$b" --create --topic tx-tools --partitions 2 --replication-factor 1 \
    > "$dir/create.txt" 2>&1 || { cat "$dir/create.txt"; fail "topics --create at $b"; }
  timeout 90 python3 "$here/txn_confluent_kafka.py" "$b" commit-abort tx-tools 1 1 4 tools-done > "$dir/done.txt" 2>&1 \
    || { cat "$dir/done.txt"; fail "tools-done transactions at $b"; }
  leave_open "$dir" tools-open python3 "$here/txn_confluent_kafka.py" "$b" hold-open tx-tools 0 tools-open 3
  leave_open "$dir" tools-hang "$work/txnhang" --bootstrap "$b" --topic tx-tools --partition 1 \
    --transactional-id tools-hang
}

# ask BOOTSTRAP DIR: every question; DIR/transcript.txt holds each command, its output
# (stdout and stderr) and its exit status.
ask() {
  local b="$1" dir="$2" out="$2/transcript.txt" hang_offset
  hang_offset="$(awk '{ print $4 }' "$dir/tools-hang.txt")"
  : > "$out"
  t() {
    local rc=0
    echo "\$ transactions $*" >> "$out"
    timeout 60 "$ref" tool transactions --bootstrap-server "$b" "$@" >> "$out" 2>&1 || rc=$?
    echo "exit $rc" >> "$out"
  }
  t list
  t list --transactional-id-pattern 'tools-(open|hang)'
  t list --duration-filter 3600000
  t describe --transactional-id tools-open
  t describe --transactional-id tools-hang
  t describe --transactional-id tools-unknown
  t describe-producers --topic tx-tools --partition 0
  t describe-producers --topic tx-tools --partition 1
  t find-hanging --broker-id 1 --max-transaction-timeout 0
  t abort --topic tx-tools --partition 1 --start-offset "$hang_offset"
  t abort --topic tx-tools --partition 1 --start-offset "$hang_offset"
  t find-hanging --topic tx-tools --max-transaction-timeout 0
  t describe-producers --topic tx-tools --partition 1
  timeout 90 python3 "$here/txn_confluent_kafka.py" "$b" commit-read tx-tools 1 tools-after after-abort \
    > "$dir/after-abort.txt" 2>&1 || { cat "$dir/after-abort.txt"; fail "read_committed after the abort at $b"; }
  # A new producer with the killed one's id fences it, aborting its open transaction.
  timeout 90 python3 "$here/txn_confluent_kafka.py" "$b" commit-read tx-tools 0 tools-open after-fence \
    > "$dir/after-fence.txt" 2>&1 || { cat "$dir/after-fence.txt"; fail "tools-open restarted at $b"; }
  t list
}

check "setup: tools-done committed and aborted, tools-open and tools-hang left open by killed producers"
setup "$b" "$work"
step "left open: $(cat "$work/tools-hang.txt") (open PID EPOCH OFFSET)"

check "kafka-transactions list, describe, describe-producers, find-hanging, abort"
ask "$b" "$work"
python3 "$here/txn_kafka_tools_normalise.py" "$work/transcript.txt" > "$work/answers.txt"
if ! diff -u "$here/txn_kafka_tools.expected" "$work/answers.txt" > "$work/diff.txt"; then
  cat "$work/diff.txt"
  fail "the tool's answers differ from the pinned Kafka's (txn_kafka_tools.expected)"
fi
step "the tool's answers equal the pinned Kafka's"

sluice_stop
step "PASS in $((SECONDS - t0))s"
