#!/usr/bin/env bash
# Kafka's share-group tools (kafka-share-groups.sh = ShareGroupCommand and kafka-groups.sh =
# GroupsCommand of the pinned release, run from bench/kafka-ref's classpath) on a KIP-932
# share group against a real `sluice server` (SLUICE_INTEROP_BROKER=kafka-ref: against the
# reference Kafka), issue 21. The group is set up the way a user would: kafka-configs
# --alter --entity-type groups sets share.auto.offset.reset=earliest, one KafkaShareConsumer
# (test/interop/share, client id share-tools-1) accepts the 20 records of a 2-partition
# topic (10 on each, written by confluent-kafka) and stays a member without polling, and 5
# more records go to partition 0. Then, on the active group: --list (plain and --state),
# --describe (offsets: per-partition start offset and lag), --describe --members
# --verbose, --describe --state --verbose, kafka-groups --list (type Share), and
# --reset-offsets refused while the group has members; the member leaves, and on the empty
# group: --describe --state, --reset-offsets --to-earliest --execute, --describe,
# --delete-offsets of the topic, --describe, --delete, --list, kafka-groups --list, and
# --describe of an unknown group. Every answer is normalised (groups848_kafka_tools_normalise.py:
# cells split and rows sorted, member ids, hosts and host:port pairs replaced) and the
# transcript must equal share_kafka_tools.expected, which is the pinned Kafka's: run with
# SLUICE_INTEROP_BROKER=kafka-ref to check it still is (SHARE_TOOLS_KEEP_ANSWERS=FILE keeps
# the normalised answers there, to renew the expected file from the pinned Kafka).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init share_kafka_tools
share_run="$here/share/run"

member_pid=""
stop_all() {
  [[ -z "$member_pid" ]] || kill -9 "$member_pid" 2>/dev/null || true
  sluice_cleanup
}
trap stop_all EXIT

group=share-tools
topic=share-tools
sluice_overrides+=(
  "group.share.heartbeat.interval.ms=1000"
  "group.share.min.heartbeat.interval.ms=1000"
)
sluice_build
"$share_run" build
classpath="$("$ref" classpath)"
sluice_start
b="$SLUICE_BOOTSTRAP"

out="$work/transcript.txt"
: > "$out"
# tool NAME CLASS ARGS...: runs one of Kafka's tools (at most 60 s) into the transcript.
tool() {
  local name="$1" cls="$2" rc=0; shift 2
  echo "\$ $name $*" >> "$out"
  timeout 60 java -Xmx256m -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$repo/bench/kafka-ref.d/log4j2-tools.xml" \
    -cp "$classpath" "$cls" --bootstrap-server "$b" "$@" >> "$out" 2>&1 || rc=$?
  echo "exit $rc" >> "$out"
}
sg() { tool share-groups org.apache.kafka.tools.consumer.group.ShareGroupCommand "$@"; }
groups_tool() { tool groups org.apache.kafka.tools.GroupsCommand "$@"; }

# produce N PARTITION [CREATE]: N records to the partition with confluent-kafka (it starts
# in a fraction of a JVM's time); CREATE first creates the 2-partition topic.
produce() {
  timeout 60 python3 - "$b" "$topic" "$@" > "$work/produce.txt" 2>&1 <<'PY' || { cat "$work/produce.txt"; fail "produce"; }
import sys
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
bootstrap, topic, n, partition = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if len(sys.argv) > 5:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
p = Producer({"bootstrap.servers": bootstrap})
for i in range(n):
    p.produce(topic, value=f"value-{partition}-{i}", partition=partition)
assert p.flush(30) == 0, "records not acknowledged"
PY
}

check "setup: share.auto.offset.reset=earliest (kafka-configs), one member accepts the 20 records, 5 more to partition 0"
produce 10 0 create
produce 10 1
tool configs org.apache.kafka.tools.ConfigCommand --alter --entity-type groups --entity-name "$group" \
  --add-config share.auto.offset.reset=earliest
mkfifo "$work/member.in"
"$share_run" --bootstrap "$b" member "$topic" "$group" "$group-1" 20 \
  < "$work/member.in" > "$work/member.out" 2>&1 &
member_pid=$!
exec {member_fd}> "$work/member.in"
deadline=$((SECONDS + 90))
until grep -q "consumed 20" "$work/member.out"; do
  kill -0 "$member_pid" 2> /dev/null || { cat "$work/member.out"; fail "the member exited before accepting the 20 records"; }
  ((SECONDS < deadline)) || { cat "$work/member.out"; fail "the member did not accept the 20 records within 90 s"; }
  sleep 0.2
done
step "ok: the member accepted the 20 records"
produce 5 0

check "kafka-share-groups and kafka-groups on the active group"
sg --list
sg --list --state
sg --describe --group "$group"
sg --describe --group "$group" --members --verbose
sg --describe --group "$group" --state --verbose
groups_tool --list
sg --reset-offsets --group "$group" --topic "$topic" --to-earliest --execute

check "kafka-share-groups on the empty group after the member left"
exec {member_fd}>&-
rc=0
timeout 60 tail --pid="$member_pid" -f /dev/null || rc=$?
wait "$member_pid" || rc=$?
member_pid=""
[[ $rc -eq 0 ]] || { cat "$work/member.out"; fail "the member did not leave cleanly (status $rc)"; }
sg --describe --group "$group" --state
sg --reset-offsets --group "$group" --topic "$topic" --to-earliest --execute
sg --describe --group "$group"
sg --delete-offsets --group "$group" --topic "$topic"
sg --describe --group "$group"
sg --delete --group "$group"
sg --list
groups_tool --list
sg --describe --group share-no-such-group

[[ -z "${SHARE_TOOLS_RAW:-}" ]] || cp "$out" "$SHARE_TOOLS_RAW"
python3 "$here/groups848_kafka_tools_normalise.py" "$out" > "$work/answers.txt"
[[ -z "${SHARE_TOOLS_KEEP_ANSWERS:-}" ]] || cp "$work/answers.txt" "$SHARE_TOOLS_KEEP_ANSWERS"
if ! diff -u "$here/share_kafka_tools.expected" "$work/answers.txt" > "$work/diff.txt"; then
  cat "$work/diff.txt"
  fail "the tools' answers differ from the pinned Kafka's (share_kafka_tools.expected)"
fi
step "the tools' answers equal the pinned Kafka's"

sluice_stop
step "PASS in $((SECONDS - t0))s"
