#!/usr/bin/env bash
# Kafka's kafka-cluster.sh unregister (ClusterTool on the reference kit's classpath) against
# Sluice: an id that is not registered fails with Kafka's BrokerIdNotRegisteredException
# message (also checked against the pinned Kafka with SLUICE_INTEROP_BROKER=kafka-ref);
# on a cluster of 3 combined nodes as processes, broker 3 is stopped and `unregister --id 3`
# removes it: the tool prints "Broker 3 is no longer registered.", DescribeCluster (fenced
# brokers included, via `sluice broker`'s decommission check) no longer lists it, and a
# second unregister fails as for an unknown id.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/sluice_lib.sh"
sluice_init balance_unregister_kafka_tool
sluice_build
classpath="$("$ref" classpath | tail -n 1)" || fail "bench/kafka-ref classpath"
cluster_tool() {
  timeout 120 java -Xmx256M -Djava.awt.headless=true -Dlog4j2.configurationFile="$repo/bench/kafka-ref.d/log4j2-tools.xml" \
    -cp "$classpath" org.apache.kafka.tools.ClusterTool "$@" 2>&1
}

if against_kafka_ref; then
  sluice_start
  cluster_tool unregister --bootstrap-server "$SLUICE_BOOTSTRAP" --id 9 > "$work/unknown.txt" || true
  cat "$work/unknown.txt"
  grep -q "BrokerIdNotRegisteredException: Broker ID 9 is not currently registered" "$work/unknown.txt" || fail "unknown id message"
  check "unregister --id 9: BrokerIdNotRegisteredException with Kafka's message"
  step "PASS in $((SECONDS - t0))s"
  exit 0
fi

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
    "--override broker.session.timeout.ms=6000 --override broker.heartbeat.interval.ms=500"
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
bootstrap="127.0.0.1:${ports[0]},127.0.0.1:${ports[2]}"
deadline=$((SECONDS + 60))
for i in 1 2 3; do
  until grep -qs 'msg="node started"' "$work/node-$i.log"; do
    ((SECONDS < deadline)) || { SLUICE_LOG="$work/node-$i.log"; fail "node $i did not start"; }
    sleep 0.2
  done
done
step "3 combined nodes up"

cluster_tool unregister --bootstrap-server "$bootstrap" --id 9 > "$work/unknown.txt" || true
cat "$work/unknown.txt"
grep -q "BrokerIdNotRegisteredException: Broker ID 9 is not currently registered" "$work/unknown.txt" || fail "unknown id message"
check "unregister --id 9: BrokerIdNotRegisteredException with Kafka's message"

stop_pid "${sluice_pids[2]}"
step "node 3 stopped"
# The tool talks to a broker, which forwards UnregisterBroker to the active controller.
deadline=$((SECONDS + 30))
until cluster_tool unregister --bootstrap-server "$bootstrap" --id 3 > "$work/unregister.txt" &&
  grep -q "Broker 3 is no longer registered." "$work/unregister.txt"; do
  ((SECONDS < deadline)) || { cat "$work/unregister.txt"; fail "unregister --id 3"; }
  sleep 1
done
cat "$work/unregister.txt"
check "kafka-cluster.sh unregister --id 3: Broker 3 is no longer registered."

# `sluice broker decommission 3` checks DescribeCluster with fenced brokers: it says the
# broker is gone.
"$SLUICE_BIN" broker decommission 3 --brokers "$bootstrap" > "$work/decommission.txt" 2>&1 || true
cat "$work/decommission.txt"
grep -q "Broker 3 holds no replicas." "$work/decommission.txt" || fail "decommission after unregister"
"$SLUICE_BIN" cluster info --brokers "$bootstrap" | tee "$work/info.txt"
if grep -Eq '^3[[:space:]]' "$work/info.txt"; then fail "broker 3 still listed"; fi
check "broker 3 is gone from the cluster's brokers"

cluster_tool unregister --bootstrap-server "$bootstrap" --id 3 > "$work/again.txt" || true
grep -q "Broker ID 3 is not currently registered" "$work/again.txt" || { cat "$work/again.txt"; fail "second unregister"; }
check "a second unregister --id 3 fails: not currently registered"
step "PASS in $((SECONDS - t0))s"
