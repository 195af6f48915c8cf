#!/usr/bin/env bash
# Share groups ride through kill -9 of their nodes (issue 21's fault test). A cluster of 3
# combined broker+controller nodes hosts a topic of $partitions partitions (replication
# factor 3, min.insync.replicas=2) holding $records records, each value a unique id,
# written by an idempotent acks=all producer. $consumers KafkaShareConsumers of the pinned
# kafka-clients (explicit acknowledgement, test/interop/share Fault.java) accept every
# record and commitSync, paced to $pace records a second so the work lasts through the
# kills, logging every delivery and every acceptance the acknowledgement commit callback
# confirmed. Meanwhile this script kill -9s, in turn, the node leading the
# __share_group_state partition that holds a share partition's state (the share
# coordinator of that partition) and the leader of a data partition, $kills kills in
# all, each node restarted after 4 s, the next kill only once the restarted node is back
# in every ISR of the topic and of the group's state partitions.
#
# Passes when, after the kills and $quiet_s s without any delivery: every record was
# delivered; no record was delivered again, nor confirmed as accepted again, after its
# acceptance was confirmed (a record acquired, or acknowledged with the answer lost, at a
# kill comes back and is fine); the group's lag is 0 on every partition
# (ListShareGroupOffsets, when the broker serves it). Prints the counts: records,
# deliveries, redeliveries (deliveries of a record seen before; after a leader failover
# both Kafka 4.4 and Sluice deliver such a record with count 1 again: its acquisition was
# never persisted), accepted and acknowledged, accepted with the answer lost to a kill
# (never delivered again, so the broker holds them accepted), archived (last delivered at
# the delivery limit and not confirmed), never delivered, duplicates after acknowledged
# acceptance, acceptances confirmed twice.
#
# SLUICE_INTEROP_BROKER=kafka-ref runs it against 3 nodes of the reference Kafka
# (bench/kafka-ref start --nodes 3; a killed node is restarted with its own command line).
# SHARE_FAULT_RECORDS, SHARE_FAULT_KILLS, SHARE_FAULT_PACE and SHARE_FAULT_CONSUMERS
# change the sizes; SHARE_FAULT_KEEP=DIR keeps a copy of the work dir (node logs, each
# consumer's .seen and .accepted files). A Sluice node's log must hold no panic.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init share_fault
share_run="$here/share/run"
records="${SHARE_FAULT_RECORDS:-100000}"
kills="${SHARE_FAULT_KILLS:-4}"
pace="${SHARE_FAULT_PACE:-1500}"
consumers="${SHARE_FAULT_CONSUMERS:-4}"
partitions=6
lock_ms=15000      # share.record.lock.duration.ms of the group: the least Kafka allows
quiet_s=20         # more than the lock: a record still owed would have come back by then
limit=5            # group.share.delivery.count.limit, Kafka's default
state_partitions=50 # share.coordinator.state.topic.num.partitions, Kafka's default
topic=share-fault
group=share-fault
out="$work/consume"
mkdir -p "$out"

sluice_overrides+=(
  "group.share.heartbeat.interval.ms=1000"
  "group.share.min.heartbeat.interval.ms=1000"
  "broker.session.timeout.ms=3000"
  "broker.heartbeat.interval.ms=500"
  "offsets.topic.replication.factor=3"
  "share.coordinator.state.topic.replication.factor=3"
  "share.coordinator.state.topic.min.isr=2"
)
sluice_build
"$share_run" build

declare -A pid port
# ---- the cluster: start_cluster, restart_node I, node_up I
if against_kafka_ref; then
  source "$here/share_fault_kafka_ref.sh"
else
  read -r -a ports <<<"$(free_ports 6)"
  voters="1@127.0.0.1:${ports[1]},2@127.0.0.1:${ports[3]},3@127.0.0.1:${ports[5]}"
  bootstrap="127.0.0.1:${ports[0]},127.0.0.1:${ports[2]},127.0.0.1:${ports[4]}"
  for i in 1 2 3; do port[$i]="${ports[$(((i - 1) * 2))]}"; done
  node_args() {
    local i="$1" o
    echo "--override process.roles=broker,controller --override node.id=$i" \
      "--override controller.quorum.voters=$voters --override controller.listener.names=CONTROLLER" \
      "--override listeners=PLAINTEXT://127.0.0.1:${port[$i]},CONTROLLER://127.0.0.1:${ports[$(((i - 1) * 2 + 1))]}" \
      "--override advertised.listeners=PLAINTEXT://127.0.0.1:${port[$i]} --override log.dirs=$work/node-$i"
    for o in "${sluice_overrides[@]}"; do echo "--override $o"; done
  }
  start_node() {
    # shellcheck disable=SC2046
    "$SLUICE_BIN" server $(node_args "$1") >> "$work/node-$1.log" 2>&1 < /dev/null &
    pid[$1]=$!
    sluice_pids+=("${pid[$1]}")
  }
  start_cluster() {
    local cluster_id i
    cluster_id="$("$SLUICE_BIN" storage random-uuid)"
    for i in 1 2 3; do
      # shellcheck disable=SC2046
      "$SLUICE_BIN" storage format --cluster-id "$cluster_id" --config /dev/null $(node_args "$i") > /dev/null
    done
    for i in 1 2 3; do start_node "$i"; done
    for i in 1 2 3; do wait_node_up "$i"; done
  }
  restart_node() { start_node "$1"; }
  node_log() { echo "$work/node-$1.log"; }
fi

# wait_node_up waits until node I answers ApiVersions (60 s at most).
wait_node_up() {
  local i="$1" deadline=$((SECONDS + 60))
  until api_versions_ok "127.0.0.1:${port[$i]}"; do
    kill -0 "${pid[$i]}" 2>/dev/null || { SLUICE_LOG="$(node_log "$i")"; fail "node $i exited during start-up"; }
    ((SECONDS < deadline)) || { SLUICE_LOG="$(node_log "$i")"; fail "node $i did not answer within 60 s"; }
    sleep 0.3
  done
}

# partition_table TOPIC prints "PARTITION LEADER ISR_SIZE" lines from kcat's metadata.
partition_table() {
  timeout 20 kcat -b "$bootstrap" -L -t "$1" 2>/dev/null \
    | sed -n 's/.*partition \([0-9]*\), leader \(-\{0,1\}[0-9]*\), replicas: [0-9,]*, isrs: \([0-9,]*\).*/\1 \2 \3/p' \
    | awk '{ print $1, $2, split($3, a, ",") }' || true
}
leader_of() { partition_table "$1" | awk -v p="$2" '$1 == p { print $2 }'; }

# wait_whole waits until every partition of the topic and the group's state partitions
# has a leader and 3 replicas in sync (90 s at most): the next kill leaves 2.
wait_whole() {
  local deadline=$((SECONDS + 90)) bad
  while true; do
    bad="$(partition_table "$topic" | awk -v n="$partitions" '$2 < 1 || $3 != 3 { b++ } END { print b + (NR != n) }')"
    bad=$((bad + $(partition_table __share_group_state \
      | awk -v want=" ${state_of[*]} " 'index(want, " " $1 " ") && ($2 < 1 || $3 != 3) { b++ } END { print b + 0 }')))
    [[ "$bad" == 0 ]] && return 0
    ((SECONDS < deadline)) || fail "ISRs not whole within 90 s: $topic: $(partition_table "$topic" | tr '\n' ';')"
    sleep 0.5
  done
}

progress() { grep '^progress' "$out/consume.log" 2>/dev/null | tail -n 1 || true; }
confirmed() {
  local c
  c="$(progress | sed -n 's/.*confirmed=\([0-9]*\).*/\1/p')"
  echo "${c:-0}"
}

start_cluster
step "3 combined nodes up at $bootstrap"

check "setup: $records records on $topic ($partitions partitions, replication factor 3, min.insync.replicas=2)"
timeout --kill-after=10 240 "$share_run" --bootstrap "$bootstrap" fault-setup "$topic" "$group" \
  "$partitions" "$records" "$lock_ms" "$state_partitions" > "$work/setup.log" 2>&1 \
  || { cat "$work/setup.log"; fail "fault-setup"; }
grep -v '^state-partition' "$work/setup.log"
declare -a state_of
while read -r _ p s; do state_of[$p]="$s"; done < <(grep '^state-partition' "$work/setup.log")
step "share state of partitions 0..$((partitions - 1)) in __share_group_state partitions ${state_of[*]}"

check "consume: $consumers share consumers accept every record ($pace/s at most) while $kills nodes are killed"
max_s=$((records / pace + kills * 40 + quiet_s + 120))
timeout --kill-after=10 $((max_s + 60)) "$share_run" --bootstrap "$bootstrap" fault-consume "$topic" "$group" \
  "$consumers" "$records" "$out" "$pace" "$quiet_s" "$max_s" "$limit" > "$out/consume.log" 2>&1 &
consume_pid=$!
sluice_pids+=("$consume_pid")

deadline=$((SECONDS + 120))
until (($(confirmed) >= records / 10)); do
  kill -0 "$consume_pid" 2>/dev/null || { cat "$out/consume.log"; fail "consumers exited before accepting $((records / 10)) records"; }
  ((SECONDS < deadline)) || { tail -n 30 "$out/consume.log"; fail "consumers did not accept $((records / 10)) records within 120 s"; }
  sleep 0.5
done
step "consumers under way: $(progress)"
wait_whole

for ((k = 1; k <= kills; k++)); do
  p=$(((k - 1) % partitions))
  if ((k % 2 == 1)); then
    role="share coordinator of partition $p (leader of __share_group_state-${state_of[$p]})"
    victim="$(leader_of __share_group_state "${state_of[$p]}")"
  else
    role="leader of $topic-$p"
    victim="$(leader_of "$topic" "$p")"
  fi
  [[ "$victim" =~ ^[123]$ ]] || fail "kill $k: no leader to kill for the $role"
  leads="$(partition_table "$topic" | awk -v n="$victim" '$2 == n { printf "%s%s", s, $1; s = "," }')"
  before="$(confirmed)"
  kill -KILL "${pid[$victim]}"
  wait "${pid[$victim]}" 2>/dev/null || true
  for ((w = 0; w < 50; w++)); do kill -0 "${pid[$victim]}" 2>/dev/null || break; sleep 0.2; done
  step "kill $k of $kills: SIGKILL to node $victim, the $role; it led $topic partitions [$leads]; $(progress)"
  sleep 4
  restart_node "$victim"
  wait_node_up "$victim"
  wait_whole
  step "node $victim restarted and back in every ISR; $(progress)"
  # The next kill lands while records are still being accepted (unless all are).
  deadline=$((SECONDS + 30))
  while (($(confirmed) <= before + 1000 && $(confirmed) < records && SECONDS < deadline)); do sleep 0.5; done
done
touch "$out/kills-done"
step "kills done; consumers finish after $quiet_s s without deliveries"

rc=0
wait "$consume_pid" || rc=$?
# The scenario's own lines (the clients' connection warnings of the kills left out).
grep -E '^(fault-consume:|FAIL|[A-Za-z.]*(Exception|Error))' "$out/consume.log" | head -n 60 || true
if [[ $rc -ne 0 ]]; then
  echo "---- deliveries of violating ids (from $out/*.seen, *.accepted)"
  for id in $(grep -o 'violation: id [0-9]*' "$out/consume.log" | awk '{ print $3 }' | head -n 5); do
    grep -HE " $id( |\$)" "$out"/*.seen "$out"/*.accepted | head -n 10 || true
  done
  for i in 1 2 3; do
    echo "---- node $i: last warnings and errors of $(node_log "$i")"
    grep -E 'level=(WARN|ERROR)|WARN|ERROR' "$(node_log "$i")" | tail -n 15 || true
  done
  if [[ -n "${SHARE_FAULT_KEEP:-}" ]]; then
    mkdir -p "$SHARE_FAULT_KEEP" && cp -r "$work/." "$SHARE_FAULT_KEEP/" 2>/dev/null || true
    echo "---- work dir copied to $SHARE_FAULT_KEEP"
  fi
  [[ $rc -eq 124 || $rc -eq 137 ]] && fail "fault-consume did not finish within $((max_s + 60)) s"
  fail "fault-consume (exit $rc)"
fi
if ! against_kafka_ref; then
  for i in 1 2 3; do
    ! grep -n -m 5 -E '^(panic|fatal error):|DATA RACE' "$(node_log "$i")" || fail "node $i: a panic (above)"
  done
fi
if [[ -n "${SHARE_FAULT_KEEP:-}" ]]; then
  mkdir -p "$SHARE_FAULT_KEEP" && cp -r "$work/." "$SHARE_FAULT_KEEP/" 2>/dev/null || true
  step "work dir copied to $SHARE_FAULT_KEEP"
fi
step "PASS in $((SECONDS - t0))s"
