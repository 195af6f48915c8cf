#!/usr/bin/env bash
# Kafka's kafka-reassign-partitions tool (ReassignPartitionsCommand on the reference kit's
# classpath: bench/kafka-ref has no short name for it) against a Sluice cluster of 3
# combined nodes run as processes: a partition holding 200 records moves from brokers 1,2 to 2,3 with --execute; --verify reports the move
# completed; kafka-topics --describe shows replicas 2,3; kcat reads every record back;
# broker 1 deleted its copy. Then a move to a killed broker is started and cancelled
# with --cancel.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init reassign_kafka_tool
against_kafka_ref && { echo "reassign_kafka_tool: runs a Sluice cluster only; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build

read -r -a ports <<<"$(free_ports 6)"
voters="1@127.0.0.1:${ports[1]},2@127.0.0.1:${ports[3]},3@127.0.0.1:${ports[5]}"
cluster_id="$("$SLUICE_BIN" storage random-uuid)"
node_args() {
  local i="$1"
  echo "--override process.roles=broker,controller --override node.id=$i" \
    "--override controller.quorum.voters=$voters --override controller.listener.names=CONTROLLER" \
    "--override listeners=PLAINTEXT://127.0.0.1:${ports[$(((i - 1) * 2))]},CONTROLLER://127.0.0.1:${ports[$(((i - 1) * 2 + 1))]}" \
    "--override advertised.listeners=PLAINTEXT://127.0.0.1:${ports[$(((i - 1) * 2))]}" \
    "--override log.dirs=$work/node-$i --override offsets.topic.replication.factor=1" \
    "--override broker.session.timeout.ms=20000"
}
for i in 1 2 3; do
  # shellcheck disable=SC2046
  "$SLUICE_BIN" storage format --cluster-id "$cluster_id" --config /dev/null $(node_args "$i") > /dev/null
done
for i in 1 2 3; do
  # shellcheck disable=SC2046
  "$SLUICE_BIN" server $(node_args "$i") > "$work/node-$i.log" 2>&1 < /dev/null &
  sluice_pids+=("$!")
done
bootstrap="127.0.0.1:${ports[0]},127.0.0.1:${ports[2]},127.0.0.1:${ports[4]}"
deadline=$((SECONDS + 60))
for i in 1 2 3; do
  until grep -qs 'msg="node started"' "$work/node-$i.log"; do
    ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-$i.log"; fail "node $i did not start"; }
    sleep 0.2
  done
done
step "3 combined nodes up at $bootstrap"

tool() { timeout 120 "$ref" tool "$1" --bootstrap-server "$bootstrap" "${@:2}" 2>&1; }
classpath="$("$ref" classpath | tail -n 1)" || fail "bench/kafka-ref classpath"
reassign() {
  timeout 120 java -Xmx512M -Djava.awt.headless=true -Dlog4j2.configurationFile="$repo/bench/kafka-ref.d/log4j2-tools.xml" \
    -cp "$classpath" org.apache.kafka.tools.reassign.ReassignPartitionsCommand --bootstrap-server "$bootstrap" "$@" 2>&1
}

deadline=$((SECONDS + 30))
until tool topics --create --topic moved --replica-assignment 1:2 > "$work/create.txt"; do
  ((SECONDS < deadline)) || { cat "$work/create.txt"; fail "topics --create --replica-assignment 1:2"; }
  sleep 1
done
seq 1 200 | sed 's/^/r/' | timeout 60 kcat -b "$bootstrap" -P -t moved -X acks=all || fail "kcat produce"
check "topic moved on brokers 1,2 with 200 records"

cat > "$work/move.json" <<'JSON'
{"version":1,"partitions":[{"topic":"moved","partition":0,"replicas":[2,3]}]}
JSON
reassign --reassignment-json-file "$work/move.json" --execute | tee "$work/execute.txt"
grep -q "Successfully started partition reassignment" "$work/execute.txt" || fail "--execute did not start the reassignment"
check "kafka-reassign-partitions --execute started the move"

deadline=$((SECONDS + 60))
until reassign --reassignment-json-file "$work/move.json" --verify > "$work/verify.txt" &&
  grep -q "Reassignment of partition moved-0 is completed" "$work/verify.txt"; do
  ((SECONDS < deadline)) || { cat "$work/verify.txt"; fail "--verify never reported the move completed"; }
  sleep 1
done
cat "$work/verify.txt"
check "kafka-reassign-partitions --verify: moved-0 completed"

tool topics --describe --topic moved | tee "$work/describe.txt"
grep -Eq 'Partition: 0[[:space:]].*Replicas: 2,3[[:space:]]' "$work/describe.txt" || fail "kafka-topics --describe does not show replicas 2,3"
check "kafka-topics --describe shows replicas 2,3"

got="$(timeout 60 kcat -b "$bootstrap" -C -t moved -o beginning -e -q | wc -l)"
[[ "$got" -eq 200 ]] || fail "kcat read $got records after the move, want 200"
check "kcat reads the 200 records after the move"

deadline=$((SECONDS + 30))
while [[ -e "$work/node-1/moved-0" ]]; do
  ((SECONDS < deadline)) || fail "broker 1 still has moved-0 after the move"
  sleep 0.5
done
check "broker 1 deleted its copy of moved-0"

# A move that cannot finish is cancelled: broker 1 is killed (SIGKILL) so it never
# catches up; until its 20 s session expires it is still a live broker for the tool, so
# --execute starts the move to 3,1; --cancel reverts it to the replicas 2,3 it had.
kill -KILL "${sluice_pids[0]}"
wait "${sluice_pids[0]}" 2>/dev/null || true
cat > "$work/back.json" <<'JSON'
{"version":1,"partitions":[{"topic":"moved","partition":0,"replicas":[3,1]}]}
JSON
reassign --reassignment-json-file "$work/back.json" --execute > "$work/back.txt" || { cat "$work/back.txt"; fail "second --execute"; }
grep -q "Successfully started partition reassignment" "$work/back.txt" || { cat "$work/back.txt"; fail "second --execute did not start"; }
# The cancel itself goes to the controller; afterwards the tool clears replication
# throttles with a request to each broker of the move, itself included, which waits out
# the API timeout for the dead broker 1, as it does against Kafka.
printf 'default.api.timeout.ms=15000\nrequest.timeout.ms=5000\n' > "$work/admin.properties"
reassign --reassignment-json-file "$work/back.json" --cancel --command-config "$work/admin.properties" > "$work/cancel.txt" || true
cat "$work/cancel.txt"
grep -q "Successfully cancelled partition reassignment for: moved-0" "$work/cancel.txt" || fail "--cancel did not cancel the move"
check "kafka-reassign-partitions --cancel of the move to a dead broker"
tool topics --describe --topic moved | tee "$work/describe2.txt"
grep -Eq 'Partition: 0[[:space:]].*Replicas: (2,3|3,2)[[:space:]]' "$work/describe2.txt" || fail "after --cancel the replicas are not 2,3 again"
got="$(timeout 60 kcat -b "$bootstrap" -C -t moved -o beginning -e -q | wc -l)"
[[ "$got" -eq 200 ]] || fail "kcat read $got records after the cancel, want 200"
check "replicas 2,3 and the 200 records after the cancel"
step "PASS in $((SECONDS - t0))s"
