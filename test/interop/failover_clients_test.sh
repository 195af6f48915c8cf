#!/usr/bin/env bash
# Clients ride through a partition leader failover (issue 9). A Sluice cluster of 3
# combined nodes (processes, formatted with `sluice storage format`) hosts one topic per
# client with 1 partition, replication factor 3 and min.insync.replicas=2. In turn:
#   - the Java producer (its defaults: acks=all, idempotent) with a Java consumer
#     (interop scenario failover-produce-consume),
#   - a kcat producer (acks=all, idempotence on, see below) and a kcat consumer,
#   - a kafka-python producer (its defaults: acks=all, idempotent) and consumer
#     (failover_kafka_python.py)
# write and read their topic while this script kill -9s the partition's leader in the
# middle of the stream, restarts it, and does it again to the next leader. Each round
# passes when every record was acknowledged and read back exactly once, in the order
# sent, and the clients' output holds no non-retriable error (the list is $nonretriable below; the retriable ones of a
# failover, such as NOT_LEADER_OR_FOLLOWER, disconnections and refused connections, are
# expected). Before each kill the partition's ISR is whole again, so the kill never
# takes min.insync.replicas away.
#
# kcat runs with enable.idempotence=true: librdkafka's default producer is not idempotent,
# and a non-idempotent producer may write a record twice when the leader dies between
# appending a batch and answering it, which Kafka allows; exactly once needs idempotence.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init failover_clients
against_kafka_ref && { echo "failover_clients: runs a Sluice cluster only; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
command -v kcat > /dev/null || fail "kcat not installed (setup.sh installs it)"
python3 -c 'import kafka' 2>/dev/null || fail "kafka-python not importable by python3 (setup.sh installs it)"
sluice_build
"$java_run" build

# Records per client and the pause between two sends: about 20 s of traffic, long enough
# for two kills of the leader, each followed by a few seconds without it and its restart.
records="${FAILOVER_RECORDS:-2000}"
interval_ms="${FAILOVER_INTERVAL_MS:-10}"
kills="${FAILOVER_KILLS:-2}"

# Names of non-retriable errors (Kafka's, Java's, kafka-python's and librdkafka's
# spellings; matched case-insensitively, "." standing for "_", " " or nothing) and of
# signs that a client gave up or lost data. Not "Traceback": kafka-python logs one for a
# connection reset by the killed broker, a retriable transport error; an exception that
# ends the client fails its exit status instead.
nonretriable='unknown.?server|UnknownError|offset.?out.?of.?range|out of range|truncation|corrupt.?(message|record)'
nonretriable+='|invalid.?record|(message|record).?(size.?)?too.?large|out.?of.?order.?sequence|unknown.?producer'
nonretriable+='|invalid.?producer.?epoch|producer.?fenced|invalid.?txn.?state|invalid.?required.?acks'
nonretriable+='|unsupported.?version|invalid.?request|authorization|invalid.?topic|illegal.?state'
nonretriable+='|fatal|inconsistent.?state|gapless|message.?timed.?out|KafkaTimeoutError'
nonretriable+='|all broker connections are down|delivery failed'

read -r -a ports <<<"$(free_ports 6)"
voters="1@127.0.0.1:${ports[1]},2@127.0.0.1:${ports[3]},3@127.0.0.1:${ports[5]}"
bootstrap="127.0.0.1:${ports[0]},127.0.0.1:${ports[2]},127.0.0.1:${ports[4]}"
cluster_id="$("$SLUICE_BIN" storage random-uuid)"
declare -A pid
node_args() {
  local i="$1"
  echo "--override process.roles=broker,controller --override node.id=$i" \
    "--override controller.quorum.voters=$voters --override controller.listener.names=CONTROLLER" \
    "--override listeners=PLAINTEXT://127.0.0.1:${ports[$(((i - 1) * 2))]},CONTROLLER://127.0.0.1:${ports[$(((i - 1) * 2 + 1))]}" \
    "--override advertised.listeners=PLAINTEXT://127.0.0.1:${ports[$(((i - 1) * 2))]}" \
    "--override log.dirs=$work/node-$i --override offsets.topic.replication.factor=3" \
    "--override broker.session.timeout.ms=3000 --override broker.heartbeat.interval.ms=500"
}
# start_node appends to the node's log, so a restarted node's log keeps its first life.
start_node() {
  local i="$1"
  # shellcheck disable=SC2046
  "$SLUICE_BIN" server $(node_args "$i") >> "$work/node-$i.log" 2>&1 < /dev/null &
  pid[$i]=$!
  sluice_pids+=("${pid[$i]}")
}
# wait_started waits until node I has logged "node started" more than BEFORE times.
wait_started() {
  local i="$1" before="$2" deadline=$((SECONDS + 60))
  local n
  # grep -c prints nothing while the log does not exist yet.
  until n=$(grep -cs 'msg="node started"' "$work/node-$i.log"); ((${n:-0} > before)); do
    kill -0 "${pid[$i]}" 2>/dev/null || { SLUICE_LOG="$work/node-$i.log"; fail "node $i exited during start-up"; }
    ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-$i.log"; fail "node $i did not start"; }
    sleep 0.2
  done
}

for i in 1 2 3; do
  # shellcheck disable=SC2046
  "$SLUICE_BIN" storage format --cluster-id "$cluster_id" --config /dev/null $(node_args "$i") > /dev/null
done
for i in 1 2 3; do start_node "$i"; done
for i in 1 2 3; do wait_started "$i" 0; done
step "3 combined nodes up at $bootstrap"

# partition_line prints kcat's line for partition 0 of TOPIC, e.g.
# "partition 0, leader 2, replicas: 2,3,1, isrs: 2,3,1".
partition_line() { timeout 20 kcat -b "$bootstrap" -L -t "$1" 2>/dev/null | grep -m1 'partition 0,' || true; }
leader_of() { partition_line "$1" | sed -n 's/.*leader \([0-9]*\),.*/\1/p'; }
isr_size() { partition_line "$1" | sed -n 's/.*isrs: \([0-9,]*\).*/\1/p' | tr ',' '\n' | grep -c . || true; }

# wait_isr_whole waits until TOPIC's partition 0 has a leader and all 3 replicas in sync.
wait_isr_whole() {
  local topic="$1" deadline=$((SECONDS + 60))
  until [[ -n "$(leader_of "$topic")" && "$(leader_of "$topic")" != -1 && "$(isr_size "$topic")" == 3 ]]; do
    ((SECONDS < deadline)) || fail "$topic: ISR not whole within 60 s: $(partition_line "$topic")"
    sleep 0.5
  done
}

create_topic() {
  local topic="$1" deadline=$((SECONDS + 30))
  until timeout 30 "$SLUICE_BIN" topic create "$topic" -p 1 -r 3 -c min.insync.replicas=2 --brokers "$bootstrap" \
    > "$work/create-$topic.txt" 2>&1; do
    ((SECONDS < deadline)) || { cat "$work/create-$topic.txt"; fail "topic create $topic"; }
    sleep 1
  done
  wait_isr_whole "$topic"
}

# kill_leader_midstream waits until the client of PROGRESS_LOG has made progress (a line
# matching PROGRESS_RE), then $kills times: kills TOPIC's leader with SIGKILL, leaves it
# dead for 4 s (the controller fences it after its 3 s session and elects another
# leader), restarts it and waits for the ISR to be whole again. The second kill hits a
# leader elected during the stream, while the node killed first catches up (its log
# truncated to the new leader's epochs).
kill_leader_midstream() {
  local topic="$1" client_pid="$2" progress_log="$3" progress_re="$4" deadline=$((SECONDS + 60))
  until grep -Eqs "$progress_re" "$progress_log"; do
    kill -0 "$client_pid" 2>/dev/null || { cat "$progress_log"; fail "$topic: client exited before making progress"; }
    ((SECONDS < deadline)) || { cat "$progress_log"; fail "$topic: client made no progress within 60 s"; }
    sleep 0.1
  done
  local k leader starts
  for ((k = 1; k <= kills; k++)); do
    kill -0 "$client_pid" 2>/dev/null || step "$topic: the client finished before kill $k of $kills (the kill still tests the restart)"
    leader="$(leader_of "$topic")"
    [[ "$leader" =~ ^[123]$ ]] || fail "$topic: no leader to kill: $(partition_line "$topic")"
    starts="$(grep -cs 'msg="node started"' "$work/node-$leader.log")"
    kill -KILL "${pid[$leader]}"
    wait "${pid[$leader]}" 2>/dev/null || true
    step "$topic: kill $k of $kills: SIGKILL to its leader, node $leader, mid-stream"
    sleep 4
    start_node "$leader"
    wait_started "$leader" "$starts"
    wait_isr_whole "$topic"
    step "$topic: node $leader restarted and in sync; leader now $(leader_of "$topic")"
  done
}

# check_client_output fails when a client's output names a non-retriable error.
check_client_output() {
  local what="$1"
  shift
  local bad
  bad="$(grep -Eih "$nonretriable" "$@" || true)"
  if [[ -n "$bad" ]]; then
    echo "$bad" | head -n 20 >&2
    fail "$what: non-retriable errors in the client output (above)"
  fi
  check "$what: only retriable errors in the client output ($(cat "$@" | wc -l) lines)"
}

# Round 1: the Java producer and consumer.
create_topic failover-java
step "java: $records records, one every $interval_ms ms, while the leader is killed"
"$java_run" --bootstrap "$bootstrap" failover-produce-consume failover-java "$records" "$interval_ms" \
  > "$work/java.out" 2> "$work/java.err" &
java_pid=$!
sluice_pids+=("$java_pid")
kill_leader_midstream failover-java "$java_pid" "$work/java.out" '^progress acked'
if ! wait "$java_pid"; then
  cat "$work/java.out" "$work/java.err" >&2
  fail "java: the failover scenario failed"
fi
cat "$work/java.out"
grep -q '^failover-produce-consume: PASS' "$work/java.out" || fail "java: no PASS line"
check "java: every acknowledged record read back exactly once, in order"
check_client_output java "$work/java.out" "$work/java.err"

# Round 2: kcat. The consumer prints one value a line; the producer reads its values from
# a pipe fed at the same pace as the other clients.
create_topic failover-kcat
wait_isr_whole failover-java
step "kcat: $records records, one every $interval_ms ms, while the leader is killed"
kcat -b "$bootstrap" -C -t failover-kcat -p 0 -o beginning -u -f '%s\n' \
  > "$work/kcat-consumed.txt" 2> "$work/kcat-consumer.err" < /dev/null &
kcat_consumer=$!
sluice_pids+=("$kcat_consumer")
python3 -c '
import sys, time
n, pause = int(sys.argv[1]), int(sys.argv[2]) / 1000
for i in range(n):
    print(f"value-{i}", flush=True)
    time.sleep(pause)
' "$records" "$interval_ms" | kcat -b "$bootstrap" -P -t failover-kcat -p 0 -X enable.idempotence=true \
  > "$work/kcat-producer.out" 2> "$work/kcat-producer.err" &
kcat_producer=$!
sluice_pids+=("$kcat_producer")
kill_leader_midstream failover-kcat "$kcat_producer" "$work/kcat-consumed.txt" '^value-250$'
if ! wait "$kcat_producer"; then
  cat "$work/kcat-producer.err" >&2
  fail "kcat: the producer exited with an error"
fi
deadline=$((SECONDS + 90))
until (($(wc -l < "$work/kcat-consumed.txt") >= records)); do
  ((SECONDS < deadline)) || break
  sleep 0.2
done
sleep 2
stop_pid "$kcat_consumer"
seq 0 $((records - 1)) | sed 's/^/value-/' > "$work/kcat-expected.txt"
if ! diff "$work/kcat-expected.txt" "$work/kcat-consumed.txt" > "$work/kcat-diff.txt"; then
  head -n 20 "$work/kcat-diff.txt" >&2
  fail "kcat: read $(wc -l < "$work/kcat-consumed.txt") records, not the $records acknowledged exactly once in order (diff above)"
fi
check "kcat: every acknowledged record read back exactly once, in order"
check_client_output kcat "$work/kcat-producer.out" "$work/kcat-producer.err" "$work/kcat-consumer.err"

# Round 3: kafka-python.
create_topic failover-python
wait_isr_whole failover-kcat
step "kafka-python: $records records, one every $interval_ms ms, while the leader is killed"
timeout 240 python3 "$here/failover_kafka_python.py" "$bootstrap" failover-python "$records" "$interval_ms" \
  > "$work/python.out" 2> "$work/python.err" &
python_pid=$!
sluice_pids+=("$python_pid")
kill_leader_midstream failover-python "$python_pid" "$work/python.out" 'progress acked'
if ! wait "$python_pid"; then
  cat "$work/python.out" "$work/python.err" >&2
  fail "kafka-python: the failover script failed"
fi
cat "$work/python.out"
check "kafka-python: every acknowledged record read back exactly once, in order"
check_client_output kafka-python "$work/python.out" "$work/python.err"

step "PASS in $((SECONDS - t0))s"
