# Sourced by share_fault_test.sh with SLUICE_INTEROP_BROKER=kafka-ref: the 3-node cluster
# is the reference Kafka's (bench/kafka-ref start --nodes 3, the test's settings as its
# --config), and a killed node is restarted with the command line it ran with (read from
# /proc before the first kill), its PID added to kafka-ref's list so `kafka-ref stop` and
# the test's trap end it.
export KAFKA_REF_STATE="$work/kafka-ref-state"

start_cluster() {
  local i pids bs
  printf '%s\n' "${sluice_overrides[@]}" > "$work/kafka-ref-overrides.properties"
  bootstrap="$("$ref" start --nodes 3 --config "$work/kafka-ref-overrides.properties" | tail -n 1)" \
    || fail "bench/kafka-ref start --nodes 3"
  kafka_run_dir="$(cat "$KAFKA_REF_STATE/rundir")"
  mapfile -t pids < "$KAFKA_REF_STATE/pids"
  IFS=, read -r -a bs <<<"$bootstrap"
  for i in 1 2 3; do
    pid[$i]="${pids[$((i - 1))]}"
    port[$i]="${bs[$((i - 1))]##*:}"
    tr '\0' '\n' < "/proc/${pid[$i]}/cmdline" > "$work/kafka-cmd-$i"
    grep -q "node$i/server.properties" "$work/kafka-cmd-$i" || fail "pid ${pid[$i]} is not node $i of kafka-ref"
  done
  step "reference Kafka $("$ref" version), 3 nodes, run dir $kafka_run_dir"
}

restart_node() {
  local i="$1" cmd
  mapfile -t cmd < "$work/kafka-cmd-$i"
  nohup "${cmd[@]}" >> "$kafka_run_dir/node$i/logs/stdout.log" 2>&1 < /dev/null &
  pid[$i]=$!
  echo "${pid[$i]}" >> "$KAFKA_REF_STATE/pids"
  sluice_pids+=("${pid[$i]}")
}

node_log() { echo "$kafka_run_dir/node$1/logs/server.log"; }
