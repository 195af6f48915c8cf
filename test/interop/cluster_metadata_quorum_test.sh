#!/usr/bin/env bash
# Kafka's metadata-quorum tool (bench/kafka-ref tool metadata-quorum) against a Sluice
# cluster of 3 combined nodes run as processes (formatted with `sluice storage format`):
# describe --status and --replication through a broker name the leader and the 3 voters;
# after kill -9 of the active controller the tool names a new leader, and
# `sluice topic create` through the brokers works again; the Java AdminClient and producer
# and kcat work across the failover and after the killed node restarts.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init cluster_metadata_quorum
against_kafka_ref && { echo "cluster_metadata_quorum: runs a Sluice cluster only; skipped with SLUICE_INTEROP_BROKER=kafka-ref"; exit 0; }
sluice_build

read -r -a ports <<<"$(free_ports 6)"
voters="1@127.0.0.1:${ports[1]},2@127.0.0.1:${ports[3]},3@127.0.0.1:${ports[5]}"
cluster_id="$("$SLUICE_BIN" storage random-uuid)"
declare -A pid
node_args() {
  local i="$1"
  echo "--override process.roles=broker,controller --override node.id=$i" \
    "--override controller.quorum.voters=$voters --override controller.listener.names=CONTROLLER" \
    "--override listeners=PLAINTEXT://127.0.0.1:${ports[$(((i - 1) * 2))]},CONTROLLER://127.0.0.1:${ports[$(((i - 1) * 2 + 1))]}" \
    "--override advertised.listeners=PLAINTEXT://127.0.0.1:${ports[$(((i - 1) * 2))]}" \
    "--override log.dirs=$work/node-$i --override offsets.topic.replication.factor=1" \
    "--override broker.session.timeout.ms=3000 --override broker.heartbeat.interval.ms=500"
}
start_node() {
  local i="$1"
  # shellcheck disable=SC2046
  "$SLUICE_BIN" server $(node_args "$i") > "$work/node-$i.log" 2>&1 < /dev/null &
  pid[$i]=$!
  sluice_pids+=("${pid[$i]}")
}
for i in 1 2 3; do
  # shellcheck disable=SC2046
  "$SLUICE_BIN" storage format --cluster-id "$cluster_id" --config /dev/null $(node_args "$i") > /dev/null
done
for i in 1 2 3; do start_node "$i"; done
bootstrap="127.0.0.1:${ports[0]},127.0.0.1:${ports[2]},127.0.0.1:${ports[4]}"
deadline=$((SECONDS + 60))
for i in 1 2 3; do
  until grep -qs 'msg="node started"' "$work/node-$i.log"; do
    ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-$i.log"; fail "node $i did not start"; }
    sleep 0.2
  done
done
step "3 combined nodes up at $bootstrap"

# The tool's admin client gives up after 10 s instead of its default 60: a call made while
# the survivors still elect (no leader, or the dead one, in what they answer) can wait on a
# node for its whole timeout, and the loops below retry it instead.
printf 'default.api.timeout.ms=10000\nrequest.timeout.ms=5000\n' > "$work/tool.properties"
tool() { timeout 120 "$ref" tool metadata-quorum --bootstrap-server "$1" --command-config "$work/tool.properties" describe "${@:2}" 2>&1; }
leader_of() { awk '/^LeaderId:/ { print $2 }' <<<"$1"; }

status="$(tool "127.0.0.1:${ports[0]}" --status)"
echo "$status"
leader="$(leader_of "$status")"
[[ "$leader" =~ ^[123]$ ]] || fail "describe --status names no leader"
grep -Eq '^CurrentVoters:.*"id": ?1.*"id": ?2.*"id": ?3|^CurrentVoters:[[:space:]]*\[1,[[:space:]]*2,[[:space:]]*3\]' <<<"$status" || fail "describe --status does not list voters 1, 2, 3"
check "metadata-quorum describe --status: leader $leader, voters 1-3"
replication="$(tool "127.0.0.1:${ports[2]}" --replication)"
echo "$replication"
[[ "$(grep -c -E '^[123][[:space:]]' <<<"$replication")" -ge 3 ]] || fail "describe --replication does not list the 3 voters"
check "metadata-quorum describe --replication lists the voters"

kill -KILL "${pid[$leader]}"
wait "${pid[$leader]}" 2>/dev/null || true
step "killed node $leader (the active controller) with SIGKILL"
survivor=$((leader % 3 + 1))
deadline=$((SECONDS + 60))
until status="$(tool "127.0.0.1:${ports[$(((survivor - 1) * 2))]}" --status)" && new="$(leader_of "$status")" && [[ "$new" =~ ^[123]$ && "$new" != "$leader" ]]; do
  ((SECONDS < deadline)) || fail "no new leader after the kill: $status"
  sleep 1
done
check "metadata-quorum names the new leader $new"
deadline=$((SECONDS + 30))
until timeout 30 "$SLUICE_BIN" topic create after-failover -p 1 --brokers "$bootstrap" > "$work/create.txt" 2>&1; do
  ((SECONDS < deadline)) || { cat "$work/create.txt"; fail "topic create after the failover"; }
  sleep 1
done
check "topic create through the brokers after the failover"

# Clients across the failover: the killed node is fenced after its 3 s session, then
# the Java AdminClient, the Java producer (auto-created topic) and kcat work through the
# surviving brokers, and again after the killed node is back.
sleep 4
check "java admin scenario after the failover"
"$java_run" --bootstrap "$bootstrap" admin || fail "java admin scenario after the failover"
check "java producer after the failover: 100 records acknowledged"
"$java_run" --bootstrap "$bootstrap" produce java-after-failover 100 > "$work/produce.txt" 2>&1 || { cat "$work/produce.txt"; fail "java produce after the failover"; }
grep -qx "acked 100" "$work/produce.txt" || { cat "$work/produce.txt"; fail "java produce: not every record acknowledged"; }
check "kcat metadata, produce and consume after the failover"
timeout 30 kcat -b "$bootstrap" -L > "$work/kcat-L.txt" 2>&1 || { cat "$work/kcat-L.txt"; fail "kcat -L"; }
grep -q "2 brokers:" "$work/kcat-L.txt" || { cat "$work/kcat-L.txt"; fail "kcat -L does not list the 2 live brokers"; }
printf 'k1\nk2\nk3\n' | timeout 30 kcat -b "$bootstrap" -P -t java-after-failover || fail "kcat produce"
got="$(timeout 30 kcat -b "$bootstrap" -C -t java-after-failover -o beginning -e -q | tail -n 3 | tr '\n' ' ')"
[[ "$got" == "k1 k2 k3 " ]] || fail "kcat consume read '$got'"

start_node "$leader"
deadline=$((SECONDS + 60))
until grep -qs 'msg="node started"' "$work/node-$leader.log"; do
  ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-$leader.log"; fail "node $leader did not restart"; }
  sleep 0.2
done
deadline=$((SECONDS + 30))
until timeout 30 kcat -b "$bootstrap" -L 2>/dev/null | grep -q "3 brokers:"; do
  ((SECONDS < deadline)) || fail "the restarted node never came back into Metadata"
  sleep 1
done
check "java admin scenario after the restart"
"$java_run" --bootstrap "$bootstrap" admin || fail "java admin scenario after the restart"
step "PASS in $((SECONDS - t0))s"
