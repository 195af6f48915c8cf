# Helpers of the MirrorMaker 2 scenarios (test/ecosystem/mm2_*_test.sh) and benchmark
# (bench/ecosystem/mm2-throughput); source it after test/interop/sluice_lib.sh and
# sluice_init.
#
#   mm2_cluster NAME KIND [KEY=VALUE...]  starts a cluster, KIND sluice (a `sluice server`)
#                                         or kafka (the pinned Kafka, bench/kafka-ref, with
#                                         a state dir of its own so two can run), with the
#                                         given broker settings; sets NAME_bootstrap
#   mm2_start PROPERTIES                  MirrorMaker 2 (dedicated mode) in the background,
#                                         its output in $work/mm2.log
#   mm2_stop                              TERM MirrorMaker, KILL after 20 s
#   mm2_tool ARGS...                      sluice.mm2.Tool (mm2/run tool)
#   wait_for SECONDS DESCRIPTION CMD...   runs CMD every second until it succeeds
#   record_count BOOTSTRAP TOPIC          the sum of the topic's partitions' end offsets
#   has_records BOOTSTRAP TOPIC N         whether record_count is N (for wait_for)
# MM2_KEEP=DIR keeps a run's files (MirrorMaker's log, the tool's outputs) in DIR.
mm2_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mm2_pid=""
mm2_ref_states=()
# sluice_cleanup runs `bench/kafka-ref stop` in kafka-ref mode; point it at a state dir of
# this run so it can never stop another run's Kafka.
export KAFKA_REF_STATE="$work/kafka-ref-unused"

mm2_cleanup() {
  mm2_stop
  # MM2_KEEP=DIR keeps the run's files (MirrorMaker's log, the tool's outputs) for a look.
  [[ -n "${MM2_KEEP:-}" ]] && mkdir -p "$MM2_KEEP" && cp "$work"/*.txt "$work"/*.log "$work"/*.properties "$MM2_KEEP"/ 2>/dev/null
  local s
  for s in "${mm2_ref_states[@]}"; do KAFKA_REF_STATE="$s" "$ref" stop > /dev/null 2>&1 || true; done
  sluice_cleanup
}
trap mm2_cleanup EXIT

mm2_cluster() {
  local name="$1" kind="$2"; shift 2
  local bootstrap
  if [[ "$kind" == sluice ]]; then
    sluice_overrides=("$@")
    sluice_start "$work/$name-data"
    bootstrap="$SLUICE_BOOTSTRAP"
    sluice_overrides=()
  else
    local state="$work/kafka-ref-$name"
    mm2_ref_states+=("$state")
    printf '%s\n' "$@" > "$work/$name.properties"
    bootstrap="$(KAFKA_REF_STATE="$state" "$ref" start --config "$work/$name.properties" | tail -n 1)" \
      || fail "bench/kafka-ref start ($name)"
    SLUICE_LOG="$(KAFKA_REF_STATE="$state" "$ref" status | awk '/^run dir:/ { print $3 }')/node1/logs/server.log"
    step "Apache Kafka $("$ref" version) ($name) up at $bootstrap"
  fi
  printf -v "${name}_bootstrap" '%s' "$bootstrap"
}

mm2_start() {
  "$mm2_dir/run" mm2 "$1" > "$work/mm2.log" 2>&1 < /dev/null &
  mm2_pid=$!
  step "MirrorMaker $("$mm2_dir/run" version) (dedicated mode) pid $mm2_pid started"
}

mm2_stop() {
  [[ -n "$mm2_pid" ]] || return 0
  kill -TERM "$mm2_pid" 2>/dev/null || true
  timeout 20 tail --pid="$mm2_pid" -f /dev/null 2>/dev/null || kill -KILL "$mm2_pid" 2>/dev/null || true
  wait "$mm2_pid" 2>/dev/null || true
  mm2_pid=""
}

mm2_tool() { timeout 120 "$mm2_dir/run" tool "$@"; }

# mm2_alive fails the scenario when MirrorMaker has exited, with its log's tail.
mm2_alive() {
  [[ -z "$mm2_pid" ]] || kill -0 "$mm2_pid" 2>/dev/null && return 0
  tail -n 40 "$work/mm2.log" >&2
  fail "MirrorMaker exited"
}

wait_for() {
  local seconds="$1" what="$2"; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    mm2_alive
    if ((SECONDS >= deadline)); then
      echo "---- last 30 lines of $work/mm2.log" >&2
      tail -n 30 "$work/mm2.log" >&2
      fail "$what: not within ${seconds}s"
    fi
    sleep 1
  done
  step "$what"
}

record_count() {
  "$ref" tool get-offsets --bootstrap-server "$1" --topic "$2" 2>/dev/null \
    | awk -F: '{ n += $3 } END { print n + 0 }'
}

has_records() { [[ "$(record_count "$1" "$2")" == "$3" ]]; }

# mm2_properties SOURCE_BOOTSTRAP TARGET_BOOTSTRAP: the settings every run shares (a
# single-node cluster on each side: replication factor 1 for every topic MirrorMaker
# creates; short intervals so a scenario sees syncs within seconds, not minutes).
mm2_properties() {
  cat <<EOF
clusters = source, target
source.bootstrap.servers = $1
target.bootstrap.servers = $2
source->target.enabled = true
target->source.enabled = false
replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset-syncs.topic.replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
config.storage.replication.factor = 1
refresh.topics.interval.seconds = 2
refresh.groups.interval.seconds = 2
sync.topic.configs.interval.seconds = 2
sync.topic.acls.interval.seconds = 2
emit.checkpoints.interval.seconds = 1
sync.group.offsets.interval.seconds = 1
emit.heartbeats.interval.seconds = 1
# A worker setting takes its cluster's prefix in mm2.properties (the target's worker runs
# the connectors); the default 60 s delays the offset sync of a topic's last record, so
# the exact translation of a group at the end of a topic, by as much.
target.offset.flush.interval.ms = 1000
EOF
}
