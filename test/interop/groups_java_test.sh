#!/usr/bin/env bash
# Consumer groups with the Java KafkaConsumer (the pinned kafka-clients, classic protocol,
# the client's default assignors) against a real `sluice server`:
#   - consume-subscribe: one consumer subscribes in a group, reads the 500 records written
#     by the Java producer and commits them; `sluice group describe` then shows the group
#     Empty with the committed offset at the log end (lag 0);
#   - group-rebalance: member a owns all 4 partitions, member b joins (two non-empty
#     disjoint assignments covering the topic), b leaves (a owns all again), and every
#     record written in each phase is read by the member owning its partition; afterwards
#     the group is Empty with lag 0 on all 4 partitions;
#   - Kafka's console-consumer with --group reads the 500 records and commits them (lag 0).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init groups_java
records=500

sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
sluice() { timeout 60 "$SLUICE_BIN" "$@" --brokers "$b"; }

# lag_zero GROUP TOPIC PARTITIONS: describe shows the group Empty and, for each partition,
# a committed offset equal to the log end.
lag_zero() {
  local out="$work/describe-$1.txt"
  sluice group describe "$1" > "$out" || { cat "$out"; fail "sluice group describe $1"; }
  cat "$out"
  grep -Eq '^STATE +Empty$' "$out" || fail "group $1 is not Empty after its consumers closed"
  local rows
  rows="$(awk -v t="$2" '$1 == t && $3 == $4 && $5 == 0' "$out" | wc -l)"
  [[ "$rows" -eq "$3" ]] || fail "group $1: $rows of $3 partitions of $2 committed at the log end with lag 0"
}

sluice topic create java-group -p 3 > /dev/null
sluice topic create java-rebalance -p 4 > /dev/null
"$java_run" --bootstrap "$b" produce java-group "$records" > "$work/produce.txt" 2>&1 \
  || { cat "$work/produce.txt"; fail "java produce scenario"; }

check "consume-subscribe: one member reads the $records records and commits them"
"$java_run" --bootstrap "$b" consume-subscribe java-group java-g1 "$records" || fail "java consume-subscribe scenario"
lag_zero java-g1 java-group 3

check "group-rebalance: a alone, b joins, b leaves; each wave read by the owning member"
"$java_run" --bootstrap "$b" group-rebalance java-rebalance java-g2 4 || fail "java group-rebalance scenario"
lag_zero java-g2 java-rebalance 4

check "console-consumer --group: Kafka's tool reads the $records records in a group and commits"
timeout 120 "$ref" tool console-consumer --bootstrap-server "$b" --topic java-group --group java-g3 \
  --from-beginning --max-messages "$records" > "$work/console.txt" 2> "$work/console.err" \
  || { tail -n 20 "$work/console.err"; fail "console-consumer --group (exit $?)"; }
[[ "$(wc -l < "$work/console.txt")" -eq "$records" ]] \
  || { tail -n 20 "$work/console.err"; fail "console-consumer read $(wc -l < "$work/console.txt") records, want $records"; }
lag_zero java-g3 java-group 3

sluice_stop
step "PASS in $((SECONDS - t0))s"
