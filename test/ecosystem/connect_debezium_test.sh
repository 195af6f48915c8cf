#!/usr/bin/env bash
# Kafka Connect in distributed mode (connect-runtime 4.3.2, the Kafka line Debezium 3.6.1
# is built on: see connect/run) with Debezium's PostgreSQL connector 3.6.1.Final
# (pgoutput) against a real PostgreSQL from Debian's packages, on a 1-node Sluice
# (SLUICE_INTEROP_BROKER=kafka-ref: the pinned Kafka):
#   - the snapshot, then inserts, updates and deletes of two tables arrive as change events
#     (op r, c, u, d with their before and after rows; a tombstone after each delete), every
#     change exactly present (test/ecosystem/connect/changes.py says what a replay is);
#   - a worker stopped, more changes made meanwhile, the worker started again: it resumes
#     without losing any;
#   - a second worker joins the group; the one running Debezium's task is kill -9ed (its
#     last source offsets maybe not committed: replays allowed, checked by LSN), more
#     changes are made, and the survivor takes the task over and delivers them;
#   - a sink connector (connect/sink: Debezium's JDBC sink is not served here) applies the
#     customers stream to another database's table, which ends equal to the source table;
#   - a second Connect cluster with exactly.once.source.support=enabled runs Debezium with
#     exactly.once.support=required (transactional producers, zombie fencing through the
#     Admin API's fenceProducers, offsets in the transactions, one every 2 s): 600 inserts
#     arrive one by one, the worker running the task is kill -9ed mid-stream, inside an
#     open transaction, and a read_committed consumer sees every insert exactly once, in
#     order (read_uncommitted also sees the aborted transaction's records; printed).
# Connect's config, offset and status topics live on the broker (replication factor 1).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../interop/sluice_lib.sh"
eco="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
connect="$eco/connect"
sluice_init connect_debezium
changes() { timeout 200 python3 "$connect/changes.py" "$@"; }

worker_pids=()
pgdir=""
stop_all() {
  local pid
  for pid in "${worker_pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  # CONNECT_KEEP_LOGS=DIR keeps the workers' logs and configs (the work dir) for reading.
  [[ -n "${CONNECT_KEEP_LOGS:-}" && -n "${work:-}" ]] && cp -r "$work" "$CONNECT_KEEP_LOGS"
  [[ -n "$pgdir" ]] && { as_pg "$pg_bin/pg_ctl" -D "$pgdir/data" -m immediate stop > /dev/null 2>&1 || true; rm -rf "$pgdir"; }
  sluice_cleanup
}
trap stop_all EXIT

# --- PostgreSQL: Debian's packages, an unprivileged cluster of our own in a temp dir.
pg_bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
if [[ ! -x "$pg_bin/initdb" ]]; then
  step "installing PostgreSQL (apt-get install postgresql)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql > /dev/null
  pg_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
fi
# PostgreSQL refuses to run as root: as root, the cluster belongs to the packages' postgres user.
if [[ $(id -u) -eq 0 ]]; then
  as_pg() { runuser -u postgres -- "$@"; }
else
  as_pg() { "$@"; }
fi
python3 -c 'import confluent_kafka' 2>/dev/null || fail "confluent-kafka not importable by python3 (test/interop/setup.sh installs it)"
"$connect/run" build || fail "building the Connect worker and its plugins"

read -r pg_port rest1 rest2 rest3 rest4 <<<"$(free_ports 5)"
pgdir="$(mktemp -d "${TMPDIR:-/tmp}/sluice-connect-pg.XXXXXX")"
[[ $(id -u) -eq 0 ]] && chown postgres "$pgdir"
as_pg "$pg_bin/initdb" -D "$pgdir/data" -U postgres --auth=trust -E UTF8 > "$pgdir/initdb.log" 2>&1 \
  || { cat "$pgdir/initdb.log"; fail "initdb"; }
cat >> "$pgdir/data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $pg_port
unix_socket_directories = '$pgdir'
wal_level = logical
max_replication_slots = 8
max_wal_senders = 8
fsync = off
shared_buffers = 32MB
EOF
as_pg "$pg_bin/pg_ctl" -D "$pgdir/data" -l "$pgdir/postgres.log" -w start > /dev/null \
  || { cat "$pgdir/postgres.log"; fail "pg_ctl start"; }
psql_db() { local db="$1"; shift; "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -U postgres -d "$db" -v ON_ERROR_STOP=1 -qAt "$@"; }
psql_db postgres -c "CREATE DATABASE app" -c "CREATE DATABASE sinkdb"
psql_db app <<'EOF'
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, balance int NOT NULL);
-- FULL: updates and deletes carry the whole old row in "before".
ALTER TABLE customers REPLICA IDENTITY FULL;
CREATE TABLE orders (id int PRIMARY KEY, customer_id int, amount int);
CREATE TABLE ticks (id int PRIMARY KEY, v text);
EOF
psql_db sinkdb -c "CREATE TABLE customers_copy (id int PRIMARY KEY, name text, balance int)"
step "PostgreSQL $("$pg_bin/postgres" --version | awk '{ print $3 }') up on 127.0.0.1:$pg_port (wal_level=logical)"
apply_batch() { changes sql "$1" | psql_db app || fail "applying batch $1"; }
apply_batch 0

sluice_build
sluice_start
b="$SLUICE_BOOTSTRAP"

# worker_props GROUP REST_PORT [EOS]: a distributed worker's properties file.
worker_props() {
  local group="$1" port="$2" eos="${3:-}" file="$work/worker-$2.properties"
  cat > "$file" <<EOF
bootstrap.servers=$b
group.id=$group
config.storage.topic=$group-configs
offset.storage.topic=$group-offsets
status.storage.topic=$group-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
offset.storage.partitions=5
status.storage.partitions=1
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=false
value.converter.schemas.enable=false
plugin.path=$("$connect/run" plugin-path)
# Every plugin here declares itself in META-INF/services: no slow scan of the jars.
plugin.discovery=service_load
listeners=http://127.0.0.1:$port
rest.advertised.host.name=127.0.0.1
rest.advertised.port=$port
# Connect's default: a worker killed with kill -9 loses up to a minute of source offsets,
# so whoever takes its task over sends those changes again (changes.py's replays).
offset.flush.interval.ms=60000
# A lost worker's tasks move after this delay (default 5 minutes, waiting for it to return).
scheduled.rebalance.max.delay.ms=3000
# The sink task's consumer group notices a killed worker in 10 s rather than 45.
consumer.session.timeout.ms=10000
EOF
  [[ "$eos" == eos ]] && echo "exactly.once.source.support=enabled" >> "$file"
  echo "$file"
}

# start_worker NAME GROUP PORT [EOS]: a worker in the background, its JVM's pid in
# worker_pid; waits until its REST API answers (60 s).
start_worker() {
  local name="$1" port="$3" props deadline=$((SECONDS + 60))
  props="$(worker_props "$2" "$3" "${4:-}")"
  "$connect/run" worker "$props" > "$work/$name.log" 2>&1 &
  worker_pid=$!
  worker_pids+=("$worker_pid")
  until curl -sf "http://127.0.0.1:$port/connectors" > /dev/null 2>&1; do
    kill -0 "$worker_pid" 2>/dev/null || { tail -n 40 "$work/$name.log"; fail "worker $name exited during start-up"; }
    ((SECONDS < deadline)) || { tail -n 40 "$work/$name.log"; fail "worker $name's REST API not up within 60 s"; }
    sleep 0.5
  done
  step "worker $name (pid $worker_pid) up, REST on $port"
}

# put_connector PORT NAME JSON: creates or updates a connector (retried while the group
# rebalances: the REST API answers 409 then).
put_connector() {
  local port="$1" name="$2" json="$3" deadline=$((SECONDS + 60)) code
  while :; do
    code="$(curl -s -o "$work/put.out" -w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
      --data "$json" "http://127.0.0.1:$port/connectors/$name/config" || true)"
    [[ "$code" == 200 || "$code" == 201 ]] && break
    ((SECONDS < deadline)) || fail "PUT connector $name: HTTP $code $(cat "$work/put.out")"
    sleep 1
  done
  step "connector $name configured through the REST API on $port"
}

# task_worker PORT NAME: prints the worker_id (host:port) running task 0 once it is
# RUNNING, nothing otherwise.
task_worker() {
  curl -sf "http://127.0.0.1:$1/connectors/$2/status" 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)
t = [t for t in s.get("tasks", []) if t["id"] == 0]
if t and t[0]["state"] == "RUNNING": print(t[0]["worker_id"])
if t and t[0]["state"] == "FAILED": print("FAILED " + t[0].get("trace", "")[:2000])' 2>/dev/null || true
}

# wait_task PORT NAME [WORKER_ID] [SECS]: until task 0 is RUNNING (on WORKER_ID if given).
wait_task() {
  local port="$1" name="$2" want="${3:-}" deadline=$((SECONDS + ${4:-90})) at
  while :; do
    at="$(task_worker "$port" "$name")"
    [[ "$at" == FAILED* ]] && fail "connector $name's task failed: ${at#FAILED }"
    [[ -n "$at" && ( -z "$want" || "$at" == "$want" ) ]] && break
    ((SECONDS < deadline)) || fail "connector $name's task not RUNNING${want:+ on $want} within ${4:-90}s (status: $(curl -s "http://127.0.0.1:$port/connectors/$name/status"))"
    sleep 1
  done
  step "connector $name's task RUNNING on $at"
}

debezium_json() {
  local name="$1" tables="$2" extra="${3:-}"
  cat <<EOF
{"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
 "tasks.max": "1", "plugin.name": "pgoutput",
 "database.hostname": "127.0.0.1", "database.port": "$pg_port", "database.user": "postgres",
 "database.password": "unused", "database.dbname": "app",
 "topic.prefix": "$name", "table.include.list": "$tables",
 "slot.name": "sluice_$name", "publication.name": "sluice_$name",
 "publication.autocreate.mode": "filtered", "snapshot.mode": "initial",
 "topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "1"$extra}
EOF
}

# sink_matches K: the sink's table equals both the source table and the model after batch K.
sink_matches() {
  local deadline=$((SECONDS + 60)) want
  want="$(changes rows "$1")"
  [[ "$(psql_db app -c "SELECT id, name, balance FROM customers ORDER BY id")" == "$want" ]] \
    || fail "the source table differs from the model after batch $1"
  until [[ "$(psql_db sinkdb -c "SELECT id, name, balance FROM customers_copy ORDER BY id")" == "$want" ]]; do
    ((SECONDS < deadline)) || { diff <(psql_db sinkdb -c "SELECT id, name, balance FROM customers_copy ORDER BY id") <(echo "$want") | head -20; fail "the sink's table after batch $1"; }
    sleep 1
  done
}

# ---------------------------------------------------------------- at-least-once cluster
check "Debezium's snapshot, then inserts, updates and deletes as change events"
start_worker a1 connect-alo "$rest1"
a1_pid=$worker_pid
put_connector "$rest1" alo "$(debezium_json alo public.customers,public.orders)"
wait_task "$rest1" alo
apply_batch 1
apply_batch 2
changes check "$b" alo 2 90 || fail "change events of batches 0..2"

check "a sink connector applies the customers stream to another database's table"
put_connector "$rest1" sink "{\"connector.class\": \"sluice.connect.PgSinkConnector\", \"tasks.max\": \"1\",
  \"topics\": \"alo.public.customers\", \"table\": \"customers_copy\",
  \"connection.url\": \"jdbc:postgresql://127.0.0.1:$pg_port/sinkdb\"}"
sink_matches 2
step "the sink's table equals the source's"

check "worker stopped, changes made meanwhile, worker started again: nothing lost"
kill -TERM "$a1_pid"
timeout 60 tail --pid="$a1_pid" -f /dev/null || fail "worker a1 did not stop within 60 s of SIGTERM"
step "worker a1 stopped"
apply_batch 3
apply_batch 4
start_worker a1-restarted connect-alo "$rest1"
a1_pid=$worker_pid
wait_task "$rest1" alo
changes check "$b" alo 4 90 || fail "change events of batches 0..4 after the restart"
sink_matches 4

check "a second worker joins; the one running Debezium's task is kill -9ed; the survivor takes over"
start_worker a2 connect-alo "$rest2"
a2_pid=$worker_pid
# Both workers in the group: the second one's REST API serves the connectors' status.
deadline=$((SECONDS + 60))
until [[ -n "$(task_worker "$rest2" alo)" ]]; do
  ((SECONDS < deadline)) || fail "worker a2 never saw connector alo's task running"
  sleep 1
done
at="$(task_worker "$rest2" alo)"
if [[ "$at" == "127.0.0.1:$rest1" ]]; then
  victim=$a1_pid; survivor=$rest2
else
  victim=$a2_pid; survivor=$rest1
fi
# Batch 5 is delivered before the kill, its offsets not yet committed; batch 6 comes after.
apply_batch 5
changes check "$b" alo 5 90 || fail "change events of batches 0..5"
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
step "kill -9 of the worker at $at (pid $victim), which ran Debezium's task"
apply_batch 6
wait_task "$survivor" alo "127.0.0.1:$survivor" 120
changes check "$b" alo 6 90 || fail "change events of batches 0..6 after the kill -9"
sink_matches 6
step "the sink's table equals the source's"
for pid in "$a1_pid" "$a2_pid"; do kill -TERM "$pid" 2>/dev/null || true; done
for pid in "$a1_pid" "$a2_pid"; do timeout 60 tail --pid="$pid" -f /dev/null || true; done
step "the at-least-once cluster stopped"
if [[ -n "${CONNECT_KEEP_LOGS:-}" ]]; then
  "$ref" tool console-consumer --bootstrap-server "$b" --topic connect-alo-offsets --from-beginning \
    --property print.timestamp=true --property print.key=true --property print.partition=true --property print.offset=true --timeout-ms 5000 > "$work/alo-offsets.txt" 2>&1 || true
fi

# ---------------------------------------------------------------- exactly-once cluster
check "exactly.once.source.support=enabled; Debezium with exactly.once.support=required; kill -9 mid-stream"
start_worker e1 connect-eos "$rest3" eos
e1_pid=$worker_pid
start_worker e2 connect-eos "$rest4" eos
e2_pid=$worker_pid
# A transaction every 2 s: the kill -9 lands in an open one, which the survivor's fencing
# aborts; read_committed must not see its records, and the survivor sends them again.
put_connector "$rest3" eos "$(debezium_json eos public.ticks ', "exactly.once.support": "required",
  "transaction.boundary": "interval", "transaction.boundary.interval.ms": "2000"')"
wait_task "$rest3" eos
ticks=600
changes ticks-sql 1 "$ticks" | psql_db app > /dev/null &
ticks_pid=$!
changes wait-ticks "$b" eos.public.ticks 150 60 || fail "the first 150 ticks did not arrive committed"
at="$(task_worker "$rest3" eos)"
if [[ "$at" == "127.0.0.1:$rest3" ]]; then
  victim=$e1_pid; survivor=$rest4
else
  victim=$e2_pid; survivor=$rest3
fi
kill -9 "$victim"
wait "$victim" 2>/dev/null || true
step "kill -9 of the worker at $at (pid $victim), mid-stream"
wait "$ticks_pid" || fail "inserting the ticks"
step "$ticks ticks inserted"
wait_task "$survivor" eos "127.0.0.1:$survivor" 120
changes check-ticks "$b" eos.public.ticks "$ticks" 120 || fail "the exactly-once ticks"
# The records went through transactions: the task's transactional id (Connect's
# <group>-<connector>-<task>) and the leader's (connect-cluster-<group>) are known to the
# broker's transaction coordinator.
"$ref" tool transactions --bootstrap-server "$b" list > "$work/txns.txt" 2>&1 || { cat "$work/txns.txt"; fail "kafka-transactions list"; }
for id in connect-eos-eos-0 connect-cluster-connect-eos; do
  grep -qE "^$id[[:space:]]" "$work/txns.txt" || { cat "$work/txns.txt"; fail "no transactional id $id"; }
done

sluice_stop
step "PASS in $((SECONDS - t0))s"
