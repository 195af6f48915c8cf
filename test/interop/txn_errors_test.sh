#!/usr/bin/env bash
# Transaction error codes, Sluice against the pinned Kafka (issue 15's differential
# checks): test/interop/txnerrors sends fixed sequences of raw requests at pinned versions
# (a stale epoch after a newer InitProducerId, an unknown transactional id, EndTxn with no
# transaction under TV1 and TV2, AddPartitionsToTxn for a missing topic, two producers
# racing on one id, timeouts above transaction.max.timeout.ms and a transaction the
# coordinator aborts on its timeout, TxnOffsetCommit for an unknown member, generation or
# group, KIP-360 recovery that does not match, a transactional Produce for a partition
# not added, v9-v11 and v12+) and prints one line per step with the error code's name.
# It runs against a `sluice server` and the reference Kafka (bench/kafka-ref, started at
# the same time) with the same overrides; Kafka's transcript must equal
# txn_errors.expected (so a change of pin or a nondeterministic step shows) and Sluice's
# must equal Kafka's. TXN_ERRORS_UPDATE=1 rewrites txn_errors.expected from Kafka's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init txn_errors

export KAFKA_REF_STATE="$work/kafka-ref-state"
stop_both() { "$ref" stop > /dev/null 2>&1 || true; sluice_cleanup; }
trap stop_both EXIT
unset SLUICE_INTEROP_BROKER

# Timed-out transactions are aborted within 200 ms of their 1 s timeout; a new group's
# first join completes at once.
overrides=(
  transaction.abort.timed.out.transaction.cleanup.interval.ms=200
  group.initial.rebalance.delay.ms=0
)
printf '%s\n' "${overrides[@]}" > "$work/kafka.properties"
"$ref" start --config "$work/kafka.properties" > "$work/kafka-start.out" 2> "$work/kafka-start.err" &
kafka_starter=$!

sluice_build
(cd "$repo" && go build -o "$work/txnerrors" ./test/interop/txnerrors) > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; fail "go build ./test/interop/txnerrors"; }
sluice_overrides=("${overrides[@]}")
sluice_start
sluice_bootstrap="$SLUICE_BOOTSTRAP"
wait "$kafka_starter" || { cat "$work/kafka-start.err"; fail "bench/kafka-ref start"; }
kafka_bootstrap="$(tail -n 1 "$work/kafka-start.out")"
step "reference Kafka $("$ref" version) up at $kafka_bootstrap"

# transcript NAME BOOTSTRAP: the sequences against one broker, into $work/NAME.txt.
transcript() {
  timeout 120 "$work/txnerrors" --bootstrap "$2" > "$work/$1.txt" 2> "$work/$1.err" \
    || { cat "$work/$1.txt" "$work/$1.err"; fail "txnerrors against $1 ($2)"; }
  step "$1: $(wc -l < "$work/$1.txt") steps"
}

check "the sequences against Kafka ($kafka_bootstrap) and Sluice ($sluice_bootstrap)"
transcript kafka "$kafka_bootstrap"
transcript sluice "$sluice_bootstrap"

if [[ "${TXN_ERRORS_UPDATE:-}" == 1 ]]; then
  cp "$work/kafka.txt" "$here/txn_errors.expected"
  step "rewrote txn_errors.expected from Kafka's transcript"
fi
if ! diff -u "$here/txn_errors.expected" "$work/kafka.txt" > "$work/kafka.diff"; then
  cat "$work/kafka.diff"
  fail "Kafka's answers differ from txn_errors.expected (- expected, + Kafka): a nondeterministic step, or a new pin (TXN_ERRORS_UPDATE=1)"
fi
if ! diff -u "$work/kafka.txt" "$work/sluice.txt" > "$work/sluice.diff"; then
  cat "$work/sluice.diff"
  fail "Sluice answers differently from Kafka (- Kafka, + Sluice)"
fi
step "Sluice's $(wc -l < "$work/sluice.txt") answers equal Kafka's"
sluice_stop
step "PASS in $((SECONDS - t0))s"
