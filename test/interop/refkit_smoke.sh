#!/usr/bin/env bash
# Proves the reference kit end to end: start a reference Kafka broker, create topics with
# Kafka's topics tool, move 1,000 records through the console producer and consumer and
# through the Java kafka-clients scenarios, read a segment back with dump-log, check the
# pinned version against kmsg with kafka-apicheck, stop.
# Exits non-zero on any failure; the broker is always stopped.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ref="$repo/bench/kafka-ref"
java_run="$here/java/run"
records=1000

# A private state dir, so the smoke test never touches a broker a developer started.
export KAFKA_REF_STATE="$(mktemp -d "${TMPDIR:-/tmp}/refkit-smoke-state.XXXXXX")"
work="$(mktemp -d "${TMPDIR:-/tmp}/refkit-smoke.XXXXXX")"
cleanup() {
  "$ref" stop >/dev/null 2>&1 || true
  rm -rf "$KAFKA_REF_STATE" "$work"
}
trap cleanup EXIT

t0=$SECONDS
step() { echo "refkit_smoke: [$((SECONDS - t0))s] $*"; }
fail() { echo "refkit_smoke: FAIL: $*" >&2; exit 1; }

# records_in_segment sums the record counts of the batches dump-log reports for a segment.
records_in_segment() {
  "$ref" tool dump-log --files "$1" > "$work/dump.txt" || fail "dump-log $1"
  awk '/baseOffset:/ { for (i = 1; i < NF; i++) if ($i == "count:") n += $(i + 1) } END { print n + 0 }' "$work/dump.txt"
}

step "classpath for Kafka $("$ref" version)"
"$ref" classpath > /dev/null

step "starting the reference broker"
start_at=$SECONDS
bootstrap="$("$ref" start | tail -n 1)"
[[ "$bootstrap" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "start printed '$bootstrap', not a bootstrap address"
run_dir="$("$ref" status | awk '/^run dir:/ { print $3 }')"
step "broker up at $bootstrap in $((SECONDS - start_at))s (run dir $run_dir)"

# The pin's premise: kmsg can speak every version the pinned Kafka advertises.
(cd "$repo" && go run ./bench/cmd/kafka-apicheck --bootstrap "$bootstrap") > "$work/apicheck.txt" \
  || { cat "$work/apicheck.txt"; fail "kafka-apicheck against Kafka $("$ref" version)"; }
step "kafka-apicheck: $(tail -n 1 "$work/apicheck.txt")"

for topic in smoke-console smoke-java; do
  "$ref" tool topics --bootstrap-server "$bootstrap" --create --topic "$topic" \
    --partitions 1 --replication-factor 1 > /dev/null || fail "create $topic"
done
"$ref" tool topics --bootstrap-server "$bootstrap" --list > "$work/topics.txt"
grep -qx smoke-console "$work/topics.txt" && grep -qx smoke-java "$work/topics.txt" \
  || fail "topics --list: $(tr '\n' ' ' < "$work/topics.txt")"
step "topics created"

seq 1 "$records" > "$work/sent.txt"
"$ref" tool console-producer --bootstrap-server "$bootstrap" --topic smoke-console \
  < "$work/sent.txt" || fail "console-producer"
"$ref" tool console-consumer --bootstrap-server "$bootstrap" --topic smoke-console \
  --from-beginning --max-messages "$records" --timeout-ms 30000 \
  > "$work/received.txt" 2> "$work/consumer.err" || { cat "$work/consumer.err" >&2; fail "console-consumer"; }
cmp -s "$work/sent.txt" "$work/received.txt" \
  || fail "console consumer got $(wc -l < "$work/received.txt") lines, not the $records sent, in order"
offsets="$("$ref" tool get-offsets --bootstrap-server "$bootstrap" --topic smoke-console)"
[[ "$offsets" == "smoke-console:0:$records" ]] || fail "get-offsets: '$offsets'"
step "console tools: $records records produced and consumed in order"

"$java_run" --bootstrap "$bootstrap" produce smoke-java "$records" | tee "$work/java.txt"
grep -qx "acked $records" "$work/java.txt" || fail "java produce"
"$java_run" --bootstrap "$bootstrap" consume-assign smoke-java 0 0 "$records" || fail "java consume-assign"
"$java_run" --bootstrap "$bootstrap" consume-subscribe smoke-java smoke-group "$records" || fail "java consume-subscribe"
"$java_run" --bootstrap "$bootstrap" admin || fail "java admin"
step "java scenarios passed"

for topic in smoke-console smoke-java; do
  segment="$run_dir/node1/data/$topic-0/00000000000000000000.log"
  [[ -f "$segment" ]] || fail "no segment at $segment"
  count="$(records_in_segment "$segment")"
  [[ "$count" == "$records" ]] || fail "dump-log reports $count records in $segment, want $records"
done
step "dump-log reads $records records from each segment"

"$ref" stop
step "PASS in $((SECONDS - t0))s"
