#!/usr/bin/env bash
# Fault test of the dynamic controller quorum (KIP-853), run by hand (about 2-3 minutes):
#   bash test/ops/quorum_fault.sh
# Sluice processes: controller 1 (storage format --standalone), controllers 2 and 3
# (--no-initial-controllers), broker 4 (controller.quorum.bootstrap.servers), the Java
# producer (acks=all, idempotent) and consumer of scenario failover-produce-consume
# running throughout. With Kafka's kafka-metadata-quorum:
#   1. add-controller 2; add-controller 3 while controller 3 is killed with SIGKILL: the
#      change fails (REQUEST_TIMED_OUT) and rolls back (3 is no voter); 3 restarted and
#      added again;
#   2. remove-controller of a follower while the active controller is killed with
#      SIGKILL: the change either completed or not (the voters are the old or the new
#      set, never anything else); the killed controller restarted; the removal finished
#      (or found done: VOTER_NOT_FOUND);
#   3. a dead controller's disk replaced: SIGKILL, its log dir wiped, remove-controller
#      of its old directory id, storage format --no-initial-controllers (a new directory
#      id), started, add-controller: it votes with its new directory id;
# and every record the producer had acknowledged is read back exactly once, in order.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../interop/sluice_lib.sh"
sluice_init quorum_fault
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
  "$SLUICE_BIN" server --config "$work/node-$1.properties" >> "$work/node-$1.log" 2>&1 < /dev/null &
  pid[$1]=$!
  sluice_pids+=("${pid[$1]}")
}
kill9() { kill -KILL "${pid[$1]}"; wait "${pid[$1]}" 2> /dev/null || true; step "killed node $1 with SIGKILL"; }
for i in 1 2 3 4; do start_node "$i"; done
deadline=$((SECONDS + 60))
for i in 1 4; do
  until grep -qs 'msg="node started"' "$work/node-$i.log"; do
    ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-$i.log"; fail "node $i did not start"; }
    sleep 0.2
  done
done
bootstrap="127.0.0.1:${ports[3]}"

printf 'default.api.timeout.ms=20000\nrequest.timeout.ms=8000\n' > "$work/tool.properties"
quorum_tool() { timeout 120 "$ref" tool metadata-quorum --bootstrap-controller "$1" "${@:2}" 2>&1; }
add() {
  cat "$work/node-$2.properties" "$work/tool.properties" > "$work/add-$2.properties"
  quorum_tool "$1" --command-config "$work/add-$2.properties" add-controller
}
remove() { quorum_tool "$1" --command-config "$work/tool.properties" remove-controller --controller-id "$2" --controller-directory-id "$3"; }
status() { quorum_tool "$1" --command-config "$work/tool.properties" describe --status; }
voters() { status "$1" | grep '^CurrentVoters:' | grep -o '"id": [0-9]*' | awk '{ printf "%s ", $2 }'; }
leader() { status "$1" | awk '/^LeaderId:/ { print $2 }'; }
any_controller() { # the first controller among $@ that answers describe --status
  for i in "$@"; do
    if status "127.0.0.1:${ports[$((i - 1))]}" > /dev/null; then echo "127.0.0.1:${ports[$((i - 1))]}"; return 0; fi
  done
  return 1
}

timeout 60 "$ref" tool topics --bootstrap-server "$bootstrap" --create --topic dyn --partitions 1 --replication-factor 1 > /dev/null || fail "create topic dyn"
"$java_run" --bootstrap "$bootstrap" failover-produce-consume dyn 12000 10 > "$work/java.out" 2>&1 &
java_pid=$!
sluice_pids+=("$java_pid")
until grep -qs '^progress acked' "$work/java.out"; do
  kill -0 "$java_pid" 2> /dev/null || { cat "$work/java.out"; fail "the Java producer stopped"; }
  sleep 0.2
done
step "Java producer (acks=all) and consumer running"

c1="127.0.0.1:${ports[0]}"
add "$c1" 2 > /dev/null || fail "add-controller 2"
# 1. The joining controller dies during its add.
kill9 3
out="$(add "$c1" 3)" && { echo "$out"; fail "add-controller 3 succeeded although controller 3 is dead"; }
grep -q "TimeoutException\|timed out" <<<"$out" || { echo "$out"; fail "add-controller of a dead controller: not a timeout"; }
deadline=$((SECONDS + 30))
until [[ "$(voters "$c1")" == "1 2 " ]] && ! status "$c1" | grep -q '"id": 3'; do
  ((SECONDS < deadline)) || { status "$c1"; fail "the failed add of controller 3 did not roll back"; }
  sleep 1
done
check "add-controller of a controller killed with SIGKILL: timed out and rolled back (voters 1 2, no learner 3)"
start_node 3
out="$(add "$c1" 3)" || { echo "$out"; fail "add-controller 3 after its restart"; }
[[ "$(voters "$c1")" == "1 2 3 " ]] || fail "voters after adding 3: '$(voters "$c1")'"
check "controller 3 restarted and added: voters 1 2 3"

# 2. The active controller dies during a removal.
lead="$(leader "$c1")"
victim=$((lead % 3 + 1))
with="$(any_controller 1 2 3)"
proposed="$(grep -c 'voter change proposed' "$work/node-$lead.log" || true)"
remove "$with" "$victim" "$(dir_of "$victim")" > "$work/remove.out" 2>&1 &
remove_pid=$!
# SIGKILL the leader the moment it has proposed the removal (not yet committed, or just).
deadline=$((SECONDS + 30))
until (($(grep -c 'voter change proposed' "$work/node-$lead.log" || true) > proposed)); do
  ((SECONDS < deadline)) || fail "the leader $lead never proposed the removal of $victim"
  sleep 0.02
done
kill9 "$lead"
wait "$remove_pid" || true
step "remove-controller $victim: $(grep -m1 -E 'Removed|Exception' "$work/remove.out" || echo no answer)"
start_node "$lead"
deadline=$((SECONDS + 60))
until with="$(any_controller 1 2 3)" && v="$(voters "$with")" && [[ "$v" == "1 2 3 " || "$v" == "$(printf '%s ' $(printf '%s\n' 1 2 3 | grep -vx "$victim"))" ]]; do
  ((SECONDS < deadline)) || fail "after the leader's death the voters are '${v:-?}', neither the old nor the new set"
  sleep 1
done
step "voters after the leader's SIGKILL during the removal: $v"
out="$(remove "$with" "$victim" "$(dir_of "$victim")")" || grep -q VoterNotFoundException <<<"$out" || { echo "$out"; fail "finishing the removal of $victim"; }
deadline=$((SECONDS + 30))
until [[ "$(voters "$(any_controller 1 2 3)")" == "$(printf '%s ' $(printf '%s\n' 1 2 3 | grep -vx "$victim"))" ]]; do
  ((SECONDS < deadline)) || fail "controller $victim still a voter"
  sleep 1
done
check "remove-controller $victim across a SIGKILL of the active controller $lead: completed once, the quorum recovered"
out="$(add "$(any_controller 1 2 3)" "$victim")" || { echo "$out"; fail "adding $victim back"; }
check "controller $victim added back: voters $(voters "$(any_controller 1 2 3)")"

# 3. A dead controller's disk replaced.
lead="$(leader "$(any_controller 1 2 3)")"
dead=$((lead % 3 + 1))
with="127.0.0.1:${ports[$((lead - 1))]}"
old_dir="$(dir_of "$dead")"
kill9 "$dead"
rm -rf "$work/node-$dead"
out="$(remove "$with" "$dead" "$old_dir")" || { echo "$out"; fail "remove-controller $dead (old directory $old_dir)"; }
"$SLUICE_BIN" storage format -t "$cluster_id" -c "$work/node-$dead.properties" --no-initial-controllers > /dev/null
[[ "$(dir_of "$dead")" != "$old_dir" ]] || fail "the reformatted directory kept its id"
start_node "$dead"
out="$(add "$with" "$dead")" || { echo "$out"; fail "add-controller $dead with its new disk"; }
status "$with" | grep -q "\"id\": $dead, \"directoryId\": \"$(dir_of "$dead")\"" || { status "$with"; fail "voter $dead does not have its new directory id"; }
check "controller $dead's disk replaced: removed by its old directory id $old_dir, added with $(dir_of "$dead")"

wait "$java_pid" || { tail -n 30 "$work/java.out"; fail "the Java producer/consumer failed"; }
grep -E '^(acked|failover-produce-consume)' "$work/java.out" | tail -n 2
grep -q '^failover-produce-consume: PASS' "$work/java.out" || fail "java: no PASS line"
check "every acknowledged record read back exactly once"
step "PASS in $((SECONDS - t0))s"
