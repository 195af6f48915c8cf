#!/usr/bin/env bash
# Apache Kafka's own CLI tools (bench/kafka-ref tool, the pinned release) against a real
# `sluice server`, with the tools' default settings:
#   - topics: --create (3 partitions), --list, --describe (partition count, leader), --delete;
#   - console-producer: 1,000 lines into a 1-partition topic;
#   - console-consumer --partition 0 --offset earliest --max-messages 1000 (no group): the
#     same lines in the same order;
#   - get-offsets: latest offset 1000 for partition 0, earliest 0.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init kafka_tools
records=1000

sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
tool() { "$ref" tool "$@"; }

check "topics --create: tools-three (3 partitions) and tools-console (1 partition)"
tool topics --bootstrap-server "$b" --create --topic tools-three --partitions 3 --replication-factor 1 \
  > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create tools-three"; }
tool topics --bootstrap-server "$b" --create --topic tools-console --partitions 1 --replication-factor 1 \
  > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create tools-console"; }

check "topics --list: both topics listed"
tool topics --bootstrap-server "$b" --list > "$work/list.txt" 2>&1 || { cat "$work/list.txt"; fail "topics --list"; }
grep -qx tools-three "$work/list.txt" && grep -qx tools-console "$work/list.txt" \
  || fail "topics --list: $(tr '\n' ' ' < "$work/list.txt")"

check "topics --describe: tools-three has PartitionCount 3 and partitions 0..2 each with a leader"
tool topics --bootstrap-server "$b" --describe --topic tools-three > "$work/describe.txt" 2>&1 \
  || { cat "$work/describe.txt"; fail "topics --describe"; }
cat "$work/describe.txt"
grep -q 'PartitionCount: 3' "$work/describe.txt" || fail "topics --describe: no 'PartitionCount: 3'"
for p in 0 1 2; do
  grep -Eq "Partition: $p[[:space:]]+Leader: [0-9]+" "$work/describe.txt" \
    || fail "topics --describe: partition $p missing or without a leader"
done

check "console-producer: $records lines into tools-console"
seq 1 "$records" | sed 's/^/line-/' > "$work/sent.txt"
tool console-producer --bootstrap-server "$b" --topic tools-console < "$work/sent.txt" \
  > "$work/producer.txt" 2>&1 || { cat "$work/producer.txt"; fail "console-producer"; }
[[ ! -s "$work/producer.txt" ]] || { cat "$work/producer.txt"; fail "console-producer printed errors"; }

check "console-consumer --partition 0 --offset earliest --max-messages $records: the same lines in order"
tool console-consumer --bootstrap-server "$b" --topic tools-console --partition 0 --offset earliest \
  --max-messages "$records" --timeout-ms 30000 > "$work/received.txt" 2> "$work/consumer.err" \
  || { cat "$work/consumer.err"; fail "console-consumer"; }
cmp -s "$work/sent.txt" "$work/received.txt" \
  || fail "console-consumer got $(wc -l < "$work/received.txt") lines, not the $records sent in order (first difference: $(cmp "$work/sent.txt" "$work/received.txt" 2>&1 | head -n 1))"

check "get-offsets: tools-console:0:$records latest, tools-console:0:0 earliest"
latest="$(tool get-offsets --bootstrap-server "$b" --topic tools-console 2>&1)" || fail "get-offsets: $latest"
[[ "$latest" == "tools-console:0:$records" ]] || fail "get-offsets latest: '$latest'"
earliest="$(tool get-offsets --bootstrap-server "$b" --topic tools-console --time earliest 2>&1)" \
  || fail "get-offsets --time earliest: $earliest"
[[ "$earliest" == "tools-console:0:0" ]] || fail "get-offsets earliest: '$earliest'"

check "topics --delete tools-three: gone from --list within 30 s"
tool topics --bootstrap-server "$b" --delete --topic tools-three > "$work/delete.txt" 2>&1 \
  || { cat "$work/delete.txt"; fail "topics --delete"; }
deadline=$((SECONDS + 30))
while :; do
  tool topics --bootstrap-server "$b" --list > "$work/list.txt" 2>&1 || { cat "$work/list.txt"; fail "topics --list after --delete"; }
  grep -qx tools-three "$work/list.txt" || break
  ((SECONDS < deadline)) || fail "tools-three still listed 30 s after --delete"
  sleep 1
done
grep -qx tools-console "$work/list.txt" || fail "topics --list after deleting tools-three lost tools-console"

sluice_stop
step "PASS in $((SECONDS - t0))s"
