#!/usr/bin/env bash
# One failed log dir of a broker that has another (KIP-858, a binary built with
# -tags sluicefault): 3 combined nodes with two log dirs each, topics of replication
# factor 3 led by node 1, `dirb` on node 1's second dir and `dira` on its first (placed
# with kafka-reassign-partitions log_dirs). Node 1's second dir fails with EIO under an
# idempotent acks=all kcat producer to dirb: node 1 names the dir offline in its
# heartbeat, the controller moves dirb's leadership to node 2 or 3 and takes node 1 out of
# its ISR; node 1 does not halt and keeps leading and serving dira; every acknowledged
# record is read back exactly once. The cluster is formatted with directory assignment on
# (sluice storage format --feature sluice.directory.assignment.version=1).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init jbod_dir_offline_cluster
against_kafka_ref && { echo "jbod_dir_offline_cluster: injects a disk fault into Sluice; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
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
    "--override log.dirs=$work/node-$i-a,$work/node-$i-b --override offsets.topic.replication.factor=3" \
    "--override broker.heartbeat.interval.ms=500 --override broker.session.timeout.ms=6000"
}
for i in 1 2 3; do
  # shellcheck disable=SC2046
  "$fault_bin" storage format --cluster-id "$cluster_id" --config /dev/null --feature sluice.directory.assignment.version=1 \
    $(node_args "$i") > /dev/null
done
for i in 1 2 3; do
  # shellcheck disable=SC2046
  SLUICE_FAULT_LOG_DIR="$work/node-1-b" "$fault_bin" server $(node_args "$i") > "$work/node-$i.log" 2>&1 < /dev/null &
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
step "3 combined nodes up at $bootstrap, two log dirs each; node 1's second dir can fail"

tool() { timeout 120 "$ref" tool "$1" --bootstrap-server "$bootstrap" "${@:2}" 2>&1; }
for t in dira dirb; do
  deadline=$((SECONDS + 30))
  until tool topics --create --topic "$t" --replica-assignment 1:2:3 --config min.insync.replicas=2 > "$work/create-$t.txt"; do
    ((SECONDS < deadline)) || { cat "$work/create-$t.txt"; fail "create topic $t"; }
    sleep 1
  done
done
printf '{"version":1,"partitions":[{"topic":"dira","partition":0,"replicas":[1,2,3],"log_dirs":["%s","any","any"]},{"topic":"dirb","partition":0,"replicas":[1,2,3],"log_dirs":["%s","any","any"]}]}\n' \
  "$work/node-1-a" "$work/node-1-b" > "$work/place.json"
tool reassign-partitions --reassignment-json-file "$work/place.json" --execute > "$work/place.txt" || { cat "$work/place.txt"; fail "reassign --execute"; }
deadline=$((SECONDS + 30))
until tool reassign-partitions --reassignment-json-file "$work/place.json" --verify > "$work/verify.txt" &&
  [[ "$(grep -c "Reassignment of replica dir[ab]-0-1 completed successfully" "$work/verify.txt")" -eq 2 ]]; do
  ((SECONDS < deadline)) || { cat "$work/verify.txt"; fail "the log dir placement did not complete"; }
  sleep 1
done
[[ -d "$work/node-1-a/dira-0" && -d "$work/node-1-b/dirb-0" ]] || fail "node 1's replicas are not in the dirs asked for"
# The broker reports each replica's dir after a heartbeat (500 ms); give it two.
deadline=$((SECONDS + 15))
until grep -qs 'msg="replicas assigned to log dirs"' "$work/node-1.log"; do
  ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-1.log"; fail "node 1 never sent AssignReplicasToDirs"; }
  sleep 0.2
done
sleep 1.5
tool topics --describe > "$work/before.txt"
grep -Eq 'Topic: dira[[:space:]]+Partition: 0[[:space:]]+Leader: 1[[:space:]]' "$work/before.txt" || fail "node 1 does not lead dira-0: $(cat "$work/before.txt")"
grep -Eq 'Topic: dirb[[:space:]]+Partition: 0[[:space:]]+Leader: 1[[:space:]]' "$work/before.txt" || fail "node 1 does not lead dirb-0: $(cat "$work/before.txt")"
check "node 1 leads dira-0 (in $work/node-1-a) and dirb-0 (in $work/node-1-b), RF 3, its placement reported to the controller"

# The producer: 20 kcat runs of 500 records to dirb, idempotent, acks=all; each must deliver all.
(
  for b in $(seq 1 20); do
    seq 1 500 | sed "s/^/r$b-/" | timeout 120 kcat -b "$bootstrap" -P -t dirb -X acks=all -X enable.idempotence=true \
      > "$work/produce-$b.txt" 2>&1 || exit 1
    grep -q "Delivery failed" "$work/produce-$b.txt" && exit 1
    echo "$b" > "$work/produced"
    sleep 0.1
  done
) &
producer=$!
runs=0
until [[ "$runs" -ge 3 ]]; do sleep 0.2; runs="$(cat "$work/produced" 2> /dev/null || echo 0)"; done
touch "$work/node-1-b.fail"
step "node 1's dir $work/node-1-b fails now (after $runs produce runs)"

deadline=$((SECONDS + 30))
until tool topics --describe --topic dirb > "$work/after-b.txt" &&
  grep -Eq 'Leader: [23][[:space:]]' "$work/after-b.txt" && ! grep -Eq 'Isr: [0-9,]*1' "$work/after-b.txt"; do
  ((SECONDS < deadline)) || { cat "$work/after-b.txt"; fail "dirb-0's leadership did not leave node 1, or node 1 stayed in its ISR"; }
  sleep 0.5
done
cat "$work/after-b.txt"
check "dirb-0 (on the failed dir) is led by node $(grep -Eo 'Leader: [0-9]+' "$work/after-b.txt" | grep -Eo '[0-9]+'), node 1 left its ISR ($(grep -Eo 'Isr: [0-9,]+' "$work/after-b.txt"))"
kill -0 "${sluice_pids[0]}" 2> /dev/null || { SLUICE_LOG="$work/node-1.log"; fail "node 1 halted though its first dir is online"; }

wait "$producer" || { tail -5 "$work"/produce-*.txt; fail "the producer lost records or failed after node 1's dir failed"; }
check "the acks=all producer delivered all 20 runs of 500 records to dirb"

# Node 1 keeps leading and serving dira.
seq 1 1000 | sed 's/^/a-/' | timeout 60 kcat -b "$bootstrap" -P -t dira -X acks=all -X enable.idempotence=true > "$work/produce-a.txt" 2>&1 ||
  fail "produce to dira after the failure"
grep -q "Delivery failed" "$work/produce-a.txt" && fail "produce to dira: $(head -3 "$work/produce-a.txt")"
tool topics --describe --topic dira > "$work/after-a.txt"
cat "$work/after-a.txt"
grep -Eq 'Leader: 1[[:space:]]' "$work/after-a.txt" || fail "node 1 no longer leads dira-0"
grep -Eq 'Isr: [0-9,]*1' "$work/after-a.txt" || fail "node 1 left dira-0's ISR"
a="$(timeout 60 kcat -b "127.0.0.1:${ports[0]}" -C -t dira -o beginning -e -q | wc -l)"
[[ "$a" -eq 1000 ]] || fail "read $a records of dira, want 1000"
check "node 1 still leads dira-0 (ISR $(grep -Eo 'Isr: [0-9,]+' "$work/after-a.txt")) and served 1000 acks=all records written after the failure"

got="$(timeout 60 kcat -b "$bootstrap" -C -t dirb -o beginning -e -q | sort | uniq | wc -l)"
all="$(timeout 60 kcat -b "$bootstrap" -C -t dirb -o beginning -e -q | wc -l)"
[[ "$got" -eq 10000 && "$all" -eq 10000 ]] || fail "read $all records of dirb ($got distinct), want 10000 exactly once"
check "all 10000 acknowledged records of dirb read back exactly once"
step "PASS in $((SECONDS - t0))s"
