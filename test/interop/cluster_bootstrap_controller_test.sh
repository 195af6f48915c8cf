#!/usr/bin/env bash
# Kafka's metadata-quorum tool with --bootstrap-controller (KIP-919) against a Sluice
# cluster of 3 dedicated controllers and 1 dedicated broker run as processes: through
# each controller, describe --status names the leader and the voters 1-3, and
# describe --replication lists the 3 voters with real log end offsets (no -1: the
# leader reports raft's progress, not broker heartbeats) and the broker as observer;
# after kill -9 of the active controller the tool, through a survivor, names a new
# leader.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init cluster_bootstrap_controller
against_kafka_ref && { echo "cluster_bootstrap_controller: runs a Sluice cluster only; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build

read -r -a ports <<<"$(free_ports 4)"
voters="1@127.0.0.1:${ports[0]},2@127.0.0.1:${ports[1]},3@127.0.0.1:${ports[2]}"
cluster_id="$("$SLUICE_BIN" storage random-uuid)"
declare -A pid
node_args() {
  local i="$1"
  local common="--override node.id=$i --override controller.quorum.voters=$voters --override controller.listener.names=CONTROLLER --override log.dirs=$work/node-$i"
  if ((i <= 3)); then
    echo "$common --override process.roles=controller --override listeners=CONTROLLER://127.0.0.1:${ports[$((i - 1))]}"
  else
    echo "$common --override process.roles=broker --override listeners=PLAINTEXT://127.0.0.1:${ports[3]}" \
      "--override advertised.listeners=PLAINTEXT://127.0.0.1:${ports[3]} --override offsets.topic.replication.factor=1"
  fi
}
start_node() {
  local i="$1"
  # shellcheck disable=SC2046
  "$SLUICE_BIN" server $(node_args "$i") > "$work/node-$i.log" 2>&1 < /dev/null &
  pid[$i]=$!
  sluice_pids+=("${pid[$i]}")
}
for i in 1 2 3 4; do
  # shellcheck disable=SC2046
  "$SLUICE_BIN" storage format --cluster-id "$cluster_id" --config /dev/null $(node_args "$i") > /dev/null
done
for i in 1 2 3 4; do start_node "$i"; done
deadline=$((SECONDS + 60))
for i in 1 2 3 4; do
  until grep -qs 'msg="node started"' "$work/node-$i.log"; do
    ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-$i.log"; fail "node $i did not start"; }
    sleep 0.2
  done
done
step "3 controllers on ${ports[0]}, ${ports[1]}, ${ports[2]} and broker 4 on ${ports[3]} up"

# The tool's admin client gives up after 10 s instead of its default 60: a call made while
# the survivors still elect (no leader, or the dead one, in what they answer) can wait on a
# node for its whole timeout, and the loops below retry it instead.
printf 'default.api.timeout.ms=10000\nrequest.timeout.ms=5000\n' > "$work/tool.properties"
tool() { timeout 120 "$ref" tool metadata-quorum --bootstrap-controller "$1" --command-config "$work/tool.properties" describe "${@:2}" 2>&1; }
leader_of() { awk '/^LeaderId:/ { print $2 }' <<<"$1"; }

for i in 1 2 3; do
  status="$(tool "127.0.0.1:${ports[$((i - 1))]}" --status)" || { echo "$status"; fail "describe --status through controller $i"; }
  leader="$(leader_of "$status")"
  [[ "$leader" =~ ^[123]$ ]] || { echo "$status"; fail "describe --status through controller $i names no leader"; }
  grep -Eq '^CurrentVoters:.*"id": ?1.*"id": ?2.*"id": ?3|^CurrentVoters:[[:space:]]*\[1,[[:space:]]*2,[[:space:]]*3\]' <<<"$status" ||
    { echo "$status"; fail "describe --status through controller $i does not list voters 1, 2, 3"; }
done
echo "$status"
check "metadata-quorum --bootstrap-controller describe --status through each controller: leader $leader, voters 1-3"

# The voters' log end offsets are known to the leader at once; give the broker's first
# heartbeat (its observer row) a moment.
deadline=$((SECONDS + 30))
for i in 1 2 3; do
  until replication="$(tool "127.0.0.1:${ports[$((i - 1))]}" --replication)" &&
    [[ "$(awk '$1 ~ /^[123]$/ && $3 ~ /^[0-9]+$/ && $3 > 0 && $4 ~ /^[0-9]+$/' <<<"$replication" | wc -l)" -eq 3 ]] &&
    awk '$1 == 4' <<<"$replication" | grep -q Observer; do
    ((SECONDS < deadline)) || { echo "$replication"; fail "describe --replication through controller $i: not 3 voters with log end offsets and lags, and observer 4"; }
    sleep 1
  done
done
echo "$replication"
check "metadata-quorum --bootstrap-controller describe --replication: voters 1-3 with log end offsets and lags, broker 4 as observer"

kill -KILL "${pid[$leader]}"
wait "${pid[$leader]}" 2>/dev/null || true
step "killed controller $leader (the active one) with SIGKILL"
survivor=$((leader % 3 + 1))
deadline=$((SECONDS + 60))
until status="$(tool "127.0.0.1:${ports[$((survivor - 1))]}" --status)" && new="$(leader_of "$status")" && [[ "$new" =~ ^[123]$ && "$new" != "$leader" ]]; do
  if ((SECONDS >= deadline)); then
    echo "$status"
    for i in 1 2 3 4; do
      [[ $i -eq $leader ]] && continue
      echo "---- last 60 lines of node $i's log"
      tail -n 60 "$work/node-$i.log"
    done
    fail "no new leader through controller $survivor after the kill"
  fi
  sleep 1
done
check "metadata-quorum --bootstrap-controller through controller $survivor names the new leader $new"
step "PASS in $((SECONDS - t0))s"
