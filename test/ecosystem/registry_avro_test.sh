#!/usr/bin/env bash
# A schema registry that keeps its state in Kafka, and Avro clients that use it, against a
# real `sluice server` (SLUICE_INTEROP_BROKER=kafka-ref: against the pinned Kafka) (issue 20):
#   - Karapace 3.15.0 (registry/vendor: Aiven's Confluent-compatible registry, which stores
#     every schema, version and config as a record of the compacted topic `_schemas`) starts
#     on the broker, elects itself primary through a consumer group and serves its API;
#   - with Confluent's Python client (registry/avro_check.py): subject payments-value at
#     compatibility BACKWARD, version 1 registered and 200 records produced with the
#     registry-aware AvroSerializer; version 2 (a defaulted field) is compatible and
#     registered, 200 more records; an incompatible version (a field with no default) is
#     refused with 409; all 400 records are consumed and decoded by their writer schema's id,
#     and again with version 2 as the reader schema; `_schemas` holds the records of both
#     versions and of the subject's config, and its cleanup.policy is compact;
#   - the registry is stopped and a new one started with no local state at all: it reads
#     `_schemas` from the beginning and serves the same subject, versions, ids, schemas and
#     compatibility; the incompatible change is still refused, version 2 registered again
#     keeps its id, a new version gets a fresh id, and a new client decodes all 400 records.
set -euo pipefail
eco="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$eco/../interop/sluice_lib.sh"
sluice_init registry_avro
registry="$eco/registry/run"
topic=payments
records=200

registry_pid=""
stop_all() {
  [[ -n "$registry_pid" ]] && stop_pid "$registry_pid"
  sluice_cleanup
}
trap stop_all EXIT

"$registry" setup || fail "installing Karapace's and the clients' Python packages"
sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"
"$ref" tool topics --bootstrap-server "$b" --create --topic "$topic" --partitions 1 --replication-factor 1 \
  > "$work/create.txt" 2>&1 || { cat "$work/create.txt"; fail "topics --create $topic"; }

# start_registry N: Karapace in the background with a fresh config and working directory
# (output in $work/registry-N.log); waits until /_health says its reader has caught up with
# `_schemas` and it is the primary (the one that writes). Sets REGISTRY_URL.
start_registry() {
  local n="$1" port dir="$work/registry-$1" deadline=$((SECONDS + 120)) health=""
  port="$(free_ports 1)"
  mkdir -p "$dir"
  cat > "$dir/karapace.json" <<EOF
{"bootstrap_uri": "$b", "host": "127.0.0.1", "port": $port,
 "advertised_hostname": "127.0.0.1", "advertised_port": $port,
 "topic_name": "_schemas", "replication_factor": 1, "compatibility": "BACKWARD",
 "client_id": "registry-$n", "group_id": "schema-registry",
 "karapace_registry": true, "karapace_rest": false, "log_level": "INFO"}
EOF
  (cd "$dir" && exec "$registry" karapace "$dir/karapace.json") > "$work/registry-$n.log" 2>&1 &
  registry_pid=$!
  REGISTRY_URL="http://127.0.0.1:$port"
  until [[ "$health" == *'"schema_registry_ready": true'* && "$health" == *'"schema_registry_is_primary": true'* ]]; do
    kill -0 "$registry_pid" 2>/dev/null || { tail -n 30 "$work/registry-$n.log"; fail "Karapace $n exited during start-up"; }
    ((SECONDS < deadline)) || { tail -n 30 "$work/registry-$n.log"; fail "Karapace $n not ready and primary within 120 s: $health"; }
    sleep 0.5
    health="$(curl -s --max-time 5 "$REGISTRY_URL/_health" 2>/dev/null | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' 2>/dev/null || true)"
  done
  step "Karapace $n (pid $registry_pid) ready and primary at $REGISTRY_URL: $health"
}

client() { timeout 180 "$registry" client "$@"; }

check "register version 1, produce, evolve to version 2, refuse an incompatible version 3, decode both versions"
start_registry 1
client evolve "$REGISTRY_URL" "$b" "$topic" "$records" "$work/state.json" || fail "Avro clients against Karapace 1"

check "the registry's topic _schemas is compacted, one partition"
"$ref" tool configs --bootstrap-server "$b" --describe --entity-type topics --entity-name _schemas \
  > "$work/configs.txt" 2>&1 || { cat "$work/configs.txt"; fail "configs --describe _schemas"; }
cat "$work/configs.txt"
grep -q "^ *cleanup.policy=compact " "$work/configs.txt" || fail "_schemas is not cleanup.policy=compact"
"$ref" tool topics --bootstrap-server "$b" --describe --topic _schemas > "$work/describe.txt" 2>&1 \
  || { cat "$work/describe.txt"; fail "topics --describe _schemas"; }
grep -q "PartitionCount: 1" "$work/describe.txt" || { cat "$work/describe.txt"; fail "_schemas has not one partition"; }

check "a new registry with no local state rebuilds everything from _schemas"
stop_pid "$registry_pid"
registry_pid=""
step "Karapace 1 stopped"
start_registry 2
client verify "$REGISTRY_URL" "$b" "$topic" "$records" "$work/state.json" || fail "Avro clients against Karapace 2"

stop_pid "$registry_pid"
registry_pid=""
sluice_stop
step "PASS in $((SECONDS - t0))s"
