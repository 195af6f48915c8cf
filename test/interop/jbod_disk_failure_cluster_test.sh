#!/usr/bin/env bash
# A failed disk on a 3-node cluster (combined nodes, a binary built with -tags sluicefault)
# with a topic of replication factor 3 under an idempotent acks=all kcat producer: node 3's
# only log dir (also its metadata log dir) fails with EIO, so node 3 halts as Kafka's broker
# does ("Shutdown broker because all log dirs in ... have failed"); the controller fences
# it, the leadership of its partitions moves to the other in-sync replicas, the producer
# keeps going, and every acknowledged record is read back exactly once.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init jbod_disk_failure_cluster
against_kafka_ref && { echo "jbod_disk_failure_cluster: injects a disk fault into Sluice; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build_fault

read -r -a ports <<<"$(free_ports 6)"
voters="1@127.0.0.1:${ports[1]},2@127.0.0.1:${ports[3]},3@127.0.0.1:${ports[5]}"
cluster_id="$("$fault_bin" storage random-uuid)"
node_args() {
  local i="$1"
  echo "--override process.roles=broker,controller --override node.id=$i" \
    "--override controller.quorum.voters=$voters --override controller.listener.names=CONTROLLER" \
    "--override listeners=PLAINTEXT://127.0.0.1:${ports[$(((i - 1) * 2))]},CONTROLLER://127.0.0.1:${ports[$(((i - 1) * 2 + 1))]}" \
    "--override advertised.listeners=PLAINTEXT://127.0.0.1:${ports[$(((i - 1) * 2))]}" \
    "--override log.dirs=$work/node-$i --override offsets.topic.replication.factor=3" \
    "--override broker.session.timeout.ms=6000"
}
for i in 1 2 3; do
  # shellcheck disable=SC2046
  "$fault_bin" storage format --cluster-id "$cluster_id" --config /dev/null $(node_args "$i") > /dev/null
done
for i in 1 2 3; do
  # shellcheck disable=SC2046
  SLUICE_FAULT_LOG_DIR="$work/node-3" "$fault_bin" server $(node_args "$i") > "$work/node-$i.log" 2>&1 < /dev/null &
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
step "3 combined nodes up at $bootstrap; node 3's log dir can fail"

tool() { timeout 120 "$ref" tool "$1" --bootstrap-server "$bootstrap" "${@:2}" 2>&1; }
deadline=$((SECONDS + 30))
until tool topics --create --topic disk3 --partitions 3 --replication-factor 3 --config min.insync.replicas=2 > "$work/create.txt"; do
  ((SECONDS < deadline)) || { cat "$work/create.txt"; fail "create topic"; }
  sleep 1
done
tool topics --describe --topic disk3 > "$work/before.txt"
grep -Eq 'Leader: 3[[:space:]]' "$work/before.txt" || fail "node 3 leads no partition of disk3: $(cat "$work/before.txt")"
check "disk3: 3 partitions, RF 3, node 3 leads at least one"

# The producer: 20 kcat runs of 500 records, idempotent, acks=all; each must deliver all.
(
  for b in $(seq 1 20); do
    seq 1 500 | sed "s/^/r$b-/" | timeout 120 kcat -b "$bootstrap" -P -t disk3 -X acks=all -X enable.idempotence=true \
      > "$work/produce-$b.txt" 2>&1 || exit 1
    grep -q "Delivery failed" "$work/produce-$b.txt" && exit 1
    echo "$b" > "$work/produced"
    sleep 0.2
  done
) &
producer=$!
until [[ "$(cat "$work/produced" 2> /dev/null || echo 0)" -ge 3 ]]; do sleep 0.2; done
touch "$work/node-3.fail"
step "node 3's log dir fails now (after $(cat "$work/produced") produce runs)"
deadline=$((SECONDS + 30))
while kill -0 "${sluice_pids[2]}" 2> /dev/null; do
  ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-3.log"; fail "node 3 did not halt after its only log dir failed"; }
  sleep 0.2
done
grep -q "Shutdown broker because all log dirs in $work/node-3 have failed\|Shutdown broker because the metadata log dir $work/node-3 has failed" "$work/node-3.log" ||
  { SLUICE_LOG="$work/node-3.log"; fail "node 3 exited without Kafka's log dir failure message"; }
check "node 3 halted: $(grep -o 'Shutdown broker because[^"]*' "$work/node-3.log" | head -1)"

wait "$producer" || { tail -5 "$work"/produce-*.txt; fail "the producer lost records or failed after node 3's disk failed"; }
check "the acks=all producer delivered all 20 runs of 500 records"
bootstrap12="127.0.0.1:${ports[0]},127.0.0.1:${ports[2]}"
timeout 120 "$ref" tool topics --bootstrap-server "$bootstrap12" --describe --topic disk3 > "$work/after.txt" 2>&1
cat "$work/after.txt"
grep -Eq 'Leader: 3[[:space:]]' "$work/after.txt" && fail "node 3 still leads a partition of disk3"
grep -Eq 'Isr: [0-9,]*3' "$work/after.txt" && fail "node 3 is still in an ISR of disk3"
check "leadership of disk3 moved to nodes 1 and 2, node 3 left every ISR"
got="$(timeout 60 kcat -b "$bootstrap12" -C -t disk3 -o beginning -e -q | sort | uniq | wc -l)"
all="$(timeout 60 kcat -b "$bootstrap12" -C -t disk3 -o beginning -e -q | wc -l)"
[[ "$got" -eq 10000 && "$all" -eq 10000 ]] || fail "read $all records ($got distinct), want 10000 exactly once"
check "all 10000 acknowledged records read back exactly once"
step "PASS in $((SECONDS - t0))s"
