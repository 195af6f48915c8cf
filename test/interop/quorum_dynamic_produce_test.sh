#!/usr/bin/env bash
# A dynamic controller quorum (KIP-853) grown from 1 to 3 voters and shrunk back to 1
# with Kafka's kafka-metadata-quorum while the Java producer (acks=all, idempotent) writes
# to a dedicated Sluice broker that found the quorum through
# controller.quorum.bootstrap.servers: the broker follows the leadership to the added
# controllers (it learns their addresses from the log) and the Java consumer reads back
# every acknowledged record exactly once, in order (scenario failover-produce-consume).
# The shrink removes the original controller 1, the active one, so the leadership moves.
# Controller 3 is added through the broker (--bootstrap-server), which forwards.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init quorum_dynamic_produce
against_kafka_ref && { echo "quorum_dynamic_produce: runs a Sluice cluster only; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build
"$java_run" build

read -r -a ports <<<"$(free_ports 4)"
cluster_id="$("$SLUICE_BIN" storage random-uuid)"
declare -A pid
props() {
  local i="$1"
  echo "node.id=$i"
  echo "controller.listener.names=CONTROLLER"
  echo "controller.quorum.bootstrap.servers=127.0.0.1:${ports[0]}"
  echo "log.dirs=$work/node-$i"
  if ((i <= 3)); then
    echo "process.roles=controller"
    echo "listeners=CONTROLLER://127.0.0.1:${ports[$((i - 1))]}"
    echo "listener.security.protocol.map=CONTROLLER:PLAINTEXT"
  else
    echo "process.roles=broker"
    echo "listeners=PLAINTEXT://127.0.0.1:${ports[3]}"
    echo "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
    echo "offsets.topic.replication.factor=1"
  fi
}
for i in 1 2 3 4; do props "$i" > "$work/node-$i.properties"; done
"$SLUICE_BIN" storage format -t "$cluster_id" -c "$work/node-1.properties" --standalone > /dev/null
for i in 2 3; do "$SLUICE_BIN" storage format -t "$cluster_id" -c "$work/node-$i.properties" --no-initial-controllers > /dev/null; done
"$SLUICE_BIN" storage format -t "$cluster_id" -c "$work/node-4.properties" > /dev/null
dir_of() { awk -F= '$1 == "directory.id" { print $2 }' "$work/node-$1/meta.properties"; }
start_node() {
  "$SLUICE_BIN" server --config "$work/node-$1.properties" > "$work/node-$1.log" 2>&1 < /dev/null &
  pid[$1]=$!
  sluice_pids+=("${pid[$1]}")
}
for i in 1 2 3 4; do start_node "$i"; done
deadline=$((SECONDS + 60))
for i in 1 4; do
  until grep -qs 'msg="node started"' "$work/node-$i.log"; do
    ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-$i.log"; fail "node $i did not start"; }
    sleep 0.2
  done
done
bootstrap="127.0.0.1:${ports[3]}"
step "controller 1 (standalone) and broker 4 (through controller.quorum.bootstrap.servers) up"

printf 'default.api.timeout.ms=20000\nrequest.timeout.ms=15000\n' > "$work/tool.properties"
quorum_tool() { timeout 120 "$ref" tool metadata-quorum --bootstrap-controller "$1" "${@:2}" 2>&1; }
add() {
  cat "$work/node-$2.properties" "$work/tool.properties" > "$work/add-$2.properties"
  quorum_tool "$1" --command-config "$work/add-$2.properties" add-controller
}
remove() { quorum_tool "$1" --command-config "$work/tool.properties" remove-controller --controller-id "$2" --controller-directory-id "$(dir_of "$2")"; }
voters() { quorum_tool "$1" --command-config "$work/tool.properties" describe --status | grep '^CurrentVoters:' | grep -o '"id": [0-9]*' | awk '{ printf "%s ", $2 }'; }

timeout 60 "$ref" tool topics --bootstrap-server "$bootstrap" --create --topic dyn --partitions 1 --replication-factor 1 > /dev/null ||
  fail "create topic dyn"
records=2500
"$java_run" --bootstrap "$bootstrap" failover-produce-consume dyn "$records" 12 > "$work/java.out" 2>&1 &
java_pid=$!
sluice_pids+=("$java_pid")
until grep -qs '^progress acked' "$work/java.out"; do
  kill -0 "$java_pid" 2> /dev/null || { cat "$work/java.out"; fail "the Java producer stopped before its first progress line"; }
  sleep 0.2
done
step "Java producer (acks=all) and consumer running on dyn"

c1="127.0.0.1:${ports[0]}"
out="$(add "$c1" 2)" || { echo "$out"; fail "add-controller 2 under load"; }
echo "$out"
# Through the broker, which forwards AddRaftVoter to the active controller as Kafka's does.
cat "$work/node-3.properties" "$work/tool.properties" > "$work/add-3.properties"
out="$(timeout 120 "$ref" tool metadata-quorum --bootstrap-server "$bootstrap" --command-config "$work/add-3.properties" add-controller 2>&1)" ||
  { echo "$out"; fail "add-controller 3 through the broker (--bootstrap-server)"; }
echo "$out"
[[ "$(voters "$c1")" == "1 2 3 " ]] || fail "voters after growing: '$(voters "$c1")'"
check "grown to voters 1 2 3 under the producer"
c2="127.0.0.1:${ports[1]}"
out="$(remove "$c2" 1)" || { echo "$out"; fail "remove-controller 1 (the first leader)"; }
# One change at a time, as an operator does: the next removal goes once the remaining voters
# have elected a leader (the removed leader stepped down; an election takes about
# controller.quorum.election.timeout.ms).
leader_of() { quorum_tool "$1" --command-config "$work/tool.properties" describe --status | awk '$1 == "LeaderId:" { print $2 }'; }
deadline=$((SECONDS + 30))
until [[ "$(leader_of "$c2")" =~ ^[23]$ ]]; do
  ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-2.log"; fail "no leader among voters 2 and 3 within 30 s of removing 1: '$(leader_of "$c2")'"; }
  sleep 0.5
done
step "leader after removing controller 1: $(leader_of "$c2")"
out="$(remove "$c2" 3)" || { echo "$out"; SLUICE_LOG="$work/node-2.log"; fail "remove-controller 3"; }
deadline=$((SECONDS + 30))
until [[ "$(voters "$c2")" == "2 " ]]; do
  ((SECONDS < deadline)) || fail "voters after shrinking: '$(voters "$c2")'"
  sleep 1
done
check "shrunk to voter 2 under the producer (controller 1, the first leader, removed)"
wait "$java_pid" || { tail -n 30 "$work/java.out"; tail -n 40 "$work/node-4.log"; fail "the Java producer/consumer failed"; }
grep -q '^failover-produce-consume: PASS' "$work/java.out" || { cat "$work/java.out"; fail "java: no PASS line"; }
grep -E '^(acked|failover-produce-consume)' "$work/java.out" | tail -n 3
check "every acknowledged record read back exactly once across the quorum changes"
step "PASS in $((SECONDS - t0))s"
