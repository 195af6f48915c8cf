# A 3-node cluster for the Streams scenarios; source it after test/interop/sluice_lib.sh
# (and after sluice_init and sluice_build). Sluice: 3 combined broker+controller
# processes formatted with `sluice storage format` (as test/interop/failover_clients_test.sh
# does); SLUICE_INTEROP_BROKER=kafka-ref: `bench/kafka-ref start --nodes 3`. Node ids are
# 1, 2 and 3 on both.
#
#   cluster3_start           starts the 3 nodes; sets CLUSTER_BOOTSTRAP
#   cluster3_kill N          SIGKILL to node N
#   cluster3_restart N       starts node N again on its data dir, waits until it answers
#   cluster3_leader TOPIC P  the node id leading partition P of TOPIC (kcat's metadata)
#   cluster3_wait_isr TOPIC  waits until every partition of TOPIC has 3 replicas in sync
#
# Both brokers get a 3 s broker session (a killed node is fenced, and its partitions
# move, in seconds), replication factor 3 with min.insync.replicas 2 for the offsets
# and transaction logs, and no initial rebalance delay (bench/kafka-ref's setting).

declare -A cluster3_pid
cluster3_common=(broker.session.timeout.ms=3000 broker.heartbeat.interval.ms=500
  offsets.topic.replication.factor=3 transaction.state.log.replication.factor=3
  transaction.state.log.min.isr=2 group.initial.rebalance.delay.ms=0)

cluster3_start() {
  command -v kcat > /dev/null || fail "kcat not installed (test/interop/setup.sh installs it)"
  if against_kafka_ref; then
    export KAFKA_REF_STATE="$work/kafka-ref-state"
    printf '%s\n' "${cluster3_common[@]}" > "$work/cluster3.properties"
    CLUSTER_BOOTSTRAP="$("$ref" start --nodes 3 --config "$work/cluster3.properties" | tail -n 1)" \
      || fail "bench/kafka-ref start --nodes 3"
    cluster3_rundir="$(cat "$KAFKA_REF_STATE/rundir")"
    local i=0 pid
    while read -r pid; do i=$((i + 1)); cluster3_pid[$i]="$pid"; done < "$KAFKA_REF_STATE/pids"
    SLUICE_LOG="$cluster3_rundir/node1/logs/server.log"
    step "reference Kafka, 3 nodes, up at $CLUSTER_BOOTSTRAP"
    return
  fi
  read -r -a cluster3_ports <<<"$(free_ports 6)"
  cluster3_voters="1@127.0.0.1:${cluster3_ports[1]},2@127.0.0.1:${cluster3_ports[3]},3@127.0.0.1:${cluster3_ports[5]}"
  CLUSTER_BOOTSTRAP="127.0.0.1:${cluster3_ports[0]},127.0.0.1:${cluster3_ports[2]},127.0.0.1:${cluster3_ports[4]}"
  local cluster_id i
  cluster_id="$("$SLUICE_BIN" storage random-uuid)"
  for i in 1 2 3; do
    # shellcheck disable=SC2046
    "$SLUICE_BIN" storage format --cluster-id "$cluster_id" --config /dev/null $(cluster3_node_args "$i") > /dev/null \
      || fail "sluice storage format node $i"
  done
  for i in 1 2 3; do cluster3_launch "$i"; done
  for i in 1 2 3; do cluster3_wait_up "$i"; done
  SLUICE_LOG="$work/node-1.log"
  step "3 Sluice nodes up at $CLUSTER_BOOTSTRAP"
}

cluster3_node_args() {
  local i="$1" o
  echo "--override process.roles=broker,controller --override node.id=$i" \
    "--override controller.quorum.voters=$cluster3_voters --override controller.listener.names=CONTROLLER" \
    "--override listeners=PLAINTEXT://127.0.0.1:${cluster3_ports[$(((i - 1) * 2))]},CONTROLLER://127.0.0.1:${cluster3_ports[$(((i - 1) * 2 + 1))]}" \
    "--override advertised.listeners=PLAINTEXT://127.0.0.1:${cluster3_ports[$(((i - 1) * 2))]}" \
    "--override log.dirs=$work/node-$i"
  for o in "${cluster3_common[@]}"; do echo "--override $o"; done
}

# cluster3_launch starts node I in the background (its log appended to, so a restarted
# node's log keeps its first life).
cluster3_launch() {
  local i="$1"
  if against_kafka_ref; then
    # The command bench/kafka-ref start runs; the new pid joins its list so that
    # `kafka-ref stop` (the trap) stops it too.
    local node_dir="$cluster3_rundir/node$i"
    nohup java -Xmx1G -Xms1G -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
      -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent \
      -Djava.awt.headless=true -Dkafka.logs.dir="$node_dir/logs" \
      -Dlog4j2.configurationFile="$repo/bench/kafka-ref.d/log4j2-server.xml" \
      -cp "$("$ref" classpath)" kafka.Kafka "$node_dir/server.properties" \
      >> "$node_dir/logs/stdout.log" 2>&1 < /dev/null &
    cluster3_pid[$i]=$!
    echo "${cluster3_pid[$i]}" >> "$KAFKA_REF_STATE/pids"
    return
  fi
  # shellcheck disable=SC2046
  "$SLUICE_BIN" server $(cluster3_node_args "$i") >> "$work/node-$i.log" 2>&1 < /dev/null &
  cluster3_pid[$i]=$!
  sluice_pids+=("${cluster3_pid[$i]}")
}

cluster3_port() {
  local i="$1"
  if against_kafka_ref; then
    sed -n 's/^listeners=PLAINTEXT:\/\/127.0.0.1:\([0-9]*\),.*/\1/p' "$cluster3_rundir/node$i/server.properties"
  else
    echo "${cluster3_ports[$(((i - 1) * 2))]}"
  fi
}

cluster3_wait_up() {
  local i="$1" deadline=$((SECONDS + 90))
  until api_versions_ok "127.0.0.1:$(cluster3_port "$i")"; do
    kill -0 "${cluster3_pid[$i]}" 2>/dev/null || fail "node $i exited during start-up"
    ((SECONDS < deadline)) || fail "node $i did not answer ApiVersions within 90 s"
    sleep 0.3
  done
}

cluster3_kill() {
  local i="$1"
  kill -KILL "${cluster3_pid[$i]}"
  wait "${cluster3_pid[$i]}" 2>/dev/null || true
  # kafka-ref's nodes are not our children: wait until the process is gone.
  while kill -0 "${cluster3_pid[$i]}" 2>/dev/null; do sleep 0.1; done
}

cluster3_restart() {
  cluster3_launch "$1"
  cluster3_wait_up "$1"
}

# cluster3_partitions TOPIC prints kcat's partition lines of TOPIC, e.g.
# "partition 0, leader 2, replicas: 2,3,1, isrs: 2,3,1".
cluster3_partitions() { timeout 20 kcat -b "$CLUSTER_BOOTSTRAP" -L -t "$1" 2>/dev/null | grep 'partition [0-9]*,' || true; }

cluster3_leader() {
  cluster3_partitions "$1" | sed -n "s/.*partition $2, leader \([0-9]*\),.*/\1/p"
}

cluster3_wait_isr() {
  local topic="$1" deadline=$((SECONDS + 90)) lines
  while :; do
    lines="$(cluster3_partitions "$topic")"
    if [[ -n "$lines" ]] && ! grep -v 'isrs: [0-9]*,[0-9]*,[0-9]*$' <<<"$lines" | grep -q . \
      && ! grep -q 'leader -1' <<<"$lines"; then
      return 0
    fi
    ((SECONDS < deadline)) || fail "$topic: ISR not whole within 90 s: $lines"
    sleep 0.5
  done
}
