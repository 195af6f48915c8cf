#!/usr/bin/env bash
# Kafka's kafka-consumer-groups tool (bench/kafka-ref tool consumer-groups, the pinned
# release) on a KIP-848 consumer group against a real `sluice server`
# (SLUICE_INTEROP_BROKER=kafka-ref: against the reference Kafka), issue 17. Two Java
# members (group.protocol=consumer, Kip848MemberScenario, client ids cg848-tools-a and -b)
# join one after the other and read and commit the 30 records of a 3-partition topic (10
# on each, written by confluent-kafka); then --list (plain, and with --state --type),
# --describe of offsets, --members --verbose (epochs, current and target assignments),
# --state --verbose (group and target assignment epochs), --reset-offsets refused while
# the group is active; the members leave, --state shows it Empty, --reset-offsets
# --to-offset on one partition, --describe shows the new offset and lag, and --describe
# of an unknown group fails as Kafka's does. Every answer is normalised
# (groups848_kafka_tools_normalise.py: cells split and rows sorted, member ids, hosts
# and host:port pairs replaced) and the transcript must equal
# groups848_kafka_tools.expected, which is the pinned Kafka's: run with
# SLUICE_INTEROP_BROKER=kafka-ref to check it still is (GROUPS848_KEEP_ANSWERS=FILE keeps
# the normalised answers there, to renew the expected file from the pinned Kafka).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
source "$here/groups848_lib.sh"
sluice_init groups848_kafka_tools

member_pids=()
stop_all() {
  local pid
  for pid in "${member_pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  sluice_cleanup
}
trap stop_all EXIT

group=cg848-tools
topic=cg848-tools
records=30
sluice_build
"$java_run" build
sluice_start
b="$SLUICE_BOOTSTRAP"

# start_member NAME: a kip848-member JVM reading its stdin from a fifo whose write end this
# shell holds (closing it makes the member leave; a later member must not inherit it);
# its report lines go to $work/NAME.out.
member_fds=()
start_member() {
  local name="$1" fd closes="" f
  mkfifo "$work/$name.in"
  for f in "${member_fds[@]}"; do closes+=" $f>&-"; done
  eval '"$java_run" --bootstrap "$b" kip848-member "$topic" "$group" "$group-$name" - \
    < "$work/$name.in" > "$work/$name.out" 2> "$work/$name.err"'"$closes"' &'
  member_pids+=("$!")
  exec {fd}> "$work/$name.in"
  member_fds+=("$fd")
}

# stop_member INDEX NAME: ends the member's input and waits for it to leave and exit.
stop_member() {
  local rc=0
  eval "exec ${member_fds[$1]}>&-"
  wait "${member_pids[$1]}" || rc=$?
  [[ $rc -eq 0 ]] || { cat "$work/$2.err"; fail "member $2 exited with status $rc"; }
}

# owned NAME: the partitions the member last said it owns, as "0,1".
owned() { awk '/^assigned/ { a = $2 } END { gsub(/[^,]*:/, "", a); print a }' "$work/$1.out"; }

# committed_total NAMES...: the sum over partitions of the highest offset committed.
committed_total() {
  cat "${@/#/$work/}" 2> /dev/null | awk '/^committed/ { if ($4 > c[$3]) c[$3] = $4 } END { for (p in c) s += c[p]; print s + 0 }'
}

# await WHAT CONDITION...: runs CONDITION until it succeeds, for up to 60 s.
await() {
  local what="$1" deadline=$((SECONDS + 60)); shift
  until "$@"; do
    ((SECONDS < deadline)) || { tail -n 5 "$work"/*.out "$work"/*.err; fail "not within 60 s: $what"; }
    sleep 0.2
  done
  step "ok: $what"
}

a_has_all() { [[ "$(owned a)" == 0,1,2 && "$(committed_total a.out)" -eq "$records" ]]; }
split() {
  local a b
  a="$(owned a)" b="$(owned b)"
  [[ -n "$a" && -n "$b" ]] && [[ "$(echo "$a,$b" | tr , '\n' | sort -u | paste -sd,)" == 0,1,2 ]] \
    && [[ $(( $(echo "$a" | tr , '\n' | wc -l) + $(echo "$b" | tr , '\n' | wc -l) )) -eq 3 ]]
}

# The topic and its records: confluent-kafka, which starts in a fraction of a JVM's time.
timeout 60 python3 - "$b" "$topic" "$records" > "$work/produce.txt" 2>&1 <<'PY' || { cat "$work/produce.txt"; fail "create and produce"; }
import sys
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
bootstrap, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
p = Producer({"bootstrap.servers": bootstrap})
for i in range(n):
    p.produce(topic, value=f"value-{i}", partition=i % 3)
assert p.flush(30) == 0, "records not acknowledged"
PY

check "setup: member a reads and commits the $records records, member b joins, the partitions split"
start_member a
await "a owns the 3 partitions and committed the $records records" a_has_all
start_member b
await "a and b own disjoint sets covering the 3 partitions" split

out="$work/transcript.txt"
: > "$out"
t() {
  local rc=0
  echo "\$ consumer-groups $*" >> "$out"
  timeout 60 "$ref" tool consumer-groups --bootstrap-server "$b" "$@" >> "$out" 2>&1 || rc=$?
  echo "exit $rc" >> "$out"
}

check "kafka-consumer-groups on the active group"
t --list
t --list --state --type
t --describe --group "$group"
t --describe --group "$group" --members --verbose
t --describe --group "$group" --state --verbose
t --reset-offsets --group "$group" --topic "$topic" --to-earliest --execute

check "kafka-consumer-groups on the empty group after both members left"
stop_member 0 a
stop_member 1 b
t --describe --group "$group" --state
t --reset-offsets --group "$group" --topic "$topic:1" --to-offset 5 --execute
t --describe --group "$group"
t --describe --group cg848-no-such-group

python3 "$here/groups848_kafka_tools_normalise.py" "$out" > "$work/answers.txt"
[[ -z "${GROUPS848_KEEP_ANSWERS:-}" ]] || cp "$work/answers.txt" "$GROUPS848_KEEP_ANSWERS"
if ! diff -u "$here/groups848_kafka_tools.expected" "$work/answers.txt" > "$work/diff.txt"; then
  cat "$work/diff.txt"
  fail "the tool's answers differ from the pinned Kafka's (groups848_kafka_tools.expected)"
fi
step "the tool's answers equal the pinned Kafka's"

sluice_stop
step "PASS in $((SECONDS - t0))s"
